"""Open data for tools and health checks: xid.json, xid.csv, entries.json and rules.json.

Each JSON file names its schema (``kb.xid/1``, ``kb.entries/1``, ``kb.rules/1``); the
schemas are documented on the site's data page (docs/data.md), and a test checks that the
files agree with the corpus. They are generated at build time into docs/data/, so MkDocs
publishes them at /data/.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from generator import __version__
from generator.corpus.validated import Corpus
from generator.exports.rules import compile_rules
from generator.corpus.model import Entry

XID_SCHEMA = "kb.xid/1"
ENTRIES_SCHEMA = "kb.entries/1"
XID_CSV_COLUMNS = ("code", "id", "name", "mnemonic", "severity", "owner", "origin", "immediate_action",
                   "investigatory_action", "reset_required", "applies_to", "unused", "legacy_causes",
                   "operators_disagreeing", "meaning", "path")


def first_sentence(text: str) -> str:
    """The first sentence of some prose, on one line."""
    flat = " ".join(text.split())
    for stop in (". ", "! ", "? "):
        if stop in flat:
            return flat.split(stop, 1)[0] + stop.strip()
    return flat


def meaning(entry: Entry) -> str:
    """The entry's quick answer, first sentence only (a one-line meaning)."""
    return first_sentence(entry.summary)


def xid_rows(corpus: Corpus) -> list[dict]:
    rows = []
    for e in corpus.xid_entries():
        x = e.xid
        assert x is not None
        rows.append({
            "code": x.code,
            "id": e.id,
            "title": e.title,
            "name": x.name,
            "mnemonic": x.mnemonic,
            "meaning": meaning(e),
            "severity": e.severity,
            "owner": e.owner,
            "origin": list(x.origin),
            "immediate_action": x.immediate_action,
            "investigatory_action": x.investigatory_action,
            "reset_required": x.reset_required,
            "applies_to": list(x.applies_to),
            "unused": x.unused,
            "legacy_causes": list(x.legacy_causes),
            "operators": [o.model_dump() for o in x.operators],
            "path": f"entries/{e.id}/",
        })
    return rows


def xid_json(corpus: Corpus) -> dict:
    return {"schema": XID_SCHEMA, "generator": f"gpu-failure-atlas {__version__}", "codes": xid_rows(corpus)}


# A cell that starts with one of these is a formula to a spreadsheet (=HYPERLINK(...), @SUM, +cmd|...):
# written after an apostrophe, which spreadsheets read as "text" and do not show.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _inert_cell(value: object) -> object:
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def xid_csv(corpus: Corpus) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=XID_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in xid_rows(corpus):
        flat = {k: row[k] for k in XID_CSV_COLUMNS if k in row}
        for key in ("origin", "applies_to", "legacy_causes"):
            flat[key] = ";".join(row[key])
        flat["operators_disagreeing"] = ";".join(o["tool"] for o in row["operators"] if o["disagrees"])
        flat["reset_required"] = "" if row["reset_required"] is None else str(row["reset_required"]).lower()
        flat["unused"] = str(row["unused"]).lower()
        writer.writerow({k: _inert_cell(v) for k, v in flat.items()})
    return buf.getvalue()


def entries_json(corpus: Corpus) -> dict:
    entries = []
    for e in corpus.entries:
        data = e.model_dump(mode="json")
        data["path"] = f"entries/{e.id}/"
        entries.append(data)
    return {"schema": ENTRIES_SCHEMA, "generator": f"gpu-failure-atlas {__version__}", "entries": entries}


def files(corpus: Corpus, rules: dict | None = None) -> dict[str, str]:
    """Every data file: name -> text (``rules``: the corpus's compiled rules, when already at hand)."""
    # compact: the C encoder only runs without indent, and these files are for programs
    dump = lambda doc: json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"  # noqa: E731
    return {
        "xid.json": dump(xid_json(corpus)),
        "xid.csv": xid_csv(corpus),
        "entries.json": dump(entries_json(corpus)),
        "rules.json": dump(rules if rules is not None else compile_rules(corpus)),
    }


def write(corpus: Corpus, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files(corpus).items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
