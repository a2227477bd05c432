"""`kb new`: write a commented template entry in the right folder, refusing bad requests."""

from __future__ import annotations

import re
from pathlib import Path

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
    elif entry_id.startswith("xid-"):
        raise InputError(f"'{entry_id}' looks like an Xid entry: use --category xid")
    existing = sorted(root.rglob(f"{entry_id}.yaml")) if root.exists() else []
    if existing:
        raise InputError(f"an entry '{entry_id}' already exists: {display_path(existing[0])}")
    path = root / category / f"{entry_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = environment().get_template("new-entry.yaml.j2").render(id=entry_id, category=category, code=code)
    path.write_text(text, encoding="utf-8")
    return path
