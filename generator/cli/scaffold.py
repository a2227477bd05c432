"""`kb new`: write a commented template entry in the right folder, refusing bad requests."""

from __future__ import annotations

import os
import re
from pathlib import Path

from generator import atomic
from generator.errors import InputError, display_path
from generator.corpus.model import CATEGORIES, ID_MAX_LENGTH, ID_PATTERN
from generator.site.render import environment


def new_entry(entry_id: str, category: str, root: Path) -> Path:
    if not re.fullmatch(ID_PATTERN, entry_id):
        raise InputError(f"{entry_id!r} is not a valid id: use lower-case words joined by hyphens, e.g. cuda-out-of-memory")
    if len(entry_id) > ID_MAX_LENGTH:  # the template would be written, then refused by kb validate
        raise InputError(f"the id is {len(entry_id)} characters long; an id is at most {ID_MAX_LENGTH}: shorten it")
    if category not in CATEGORIES:
        raise InputError(f"unknown category '{category}'; choose one of: {', '.join(CATEGORIES)}")
    code = None
    if category == "xid":
        m = re.fullmatch(r"xid-([0-9]{1,3})", entry_id)
        if not m or int(m.group(1)) < 1:
            raise InputError(f"an Xid entry's id is xid-<code>, e.g. xid-79; got '{entry_id}'")
        code = int(m.group(1))
        if entry_id != f"xid-{code}":  # kb validate refuses it (KB014), and it would stand beside xid-<code>.yaml
            raise InputError(f"an entry for Xid {code} must have the id 'xid-{code}' (no leading zero); "
                             f"got '{entry_id}'")
    elif entry_id.startswith("xid-"):
        raise InputError(f"'{entry_id}' looks like an Xid entry: use --category xid")
    if root.exists() and not root.is_dir():
        raise InputError(f"{display_path(root)}: --root is not a folder; pass the folder that holds the entries "
                         "(default kb/entries)")
    try:
        existing = sorted(root.rglob(f"{entry_id}.yaml")) if root.exists() else []
    except OSError as exc:
        raise InputError(f"{display_path(root)}: cannot read the folder: {exc.strerror or exc}; check its permissions") from None
    if existing:
        raise InputError(f"an entry '{entry_id}' already exists: {display_path(existing[0])}")
    path = root / category / f"{entry_id}.yaml"
    text = environment().get_template("new-entry.yaml.j2").render(id=entry_id, category=category, code=code)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.replace_text(path, text)  # whole or not at all: a full disk leaves no half template
    except OSError as exc:
        shown = display_path(Path(os.fsdecode(exc.filename))) if exc.filename else display_path(path)
        raise InputError(f"{shown}: cannot write the new entry: {exc.strerror or exc}; check that --root names a "
                         "folder you can write to (default kb/entries)") from None
    return path
