"""Merge the collected field sample into two eval folders: dev (two thirds) and holdout (one third).

The field sample (issue 12) is real logs from public threads, collected per family before any
signature was written for them. One third of each family's failure logs, and one third of the
healthy logs of all families together, drawn with the seed below, is the untouched part: its
misses are never read to write signatures. Run once after collection:

    .venv/bin/python tools/field_split.py tests/fixtures/field/incoming tests/fixtures/field

It writes <out>/dev/ and <out>/holdout/ (cases/NNN.log + labels.yaml each, ids prefixed by
family) and <out>/SPLIT.md with the seed and the ids in each part.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import yaml

SEED = 20261201


def main(incoming: Path, out: Path) -> int:
    rng = random.Random(SEED)
    parts: dict[str, list[dict]] = {"dev": [], "holdout": []}
    collected: list[tuple[Path, dict]] = []
    held: set[tuple[str, str]] = set()
    for family_dir in sorted(p for p in incoming.iterdir() if p.is_dir()):
        labels = yaml.safe_load((family_dir / "labels.yaml").read_text(encoding="utf-8"))
        collected.extend((family_dir, item) for item in labels)
        failing = sorted(str(i["id"]) for i in labels if i["expected"] != "none")
        held.update((family_dir.name, case) for case in rng.sample(failing, round(len(failing) / 3)))
    healthy = sorted((d.name, str(i["id"])) for d, i in collected if i["expected"] == "none")
    held.update(rng.sample(healthy, round(len(healthy) / 3)))
    for family_dir, item in collected:
        case = f"{family_dir.name}-{item['id']}"
        part = "holdout" if (family_dir.name, str(item["id"])) in held else "dev"
        folder = out / part / "cases"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(family_dir / f"{item['id']}.log", folder / f"{case}.log")
        parts[part].append({**item, "id": case, "family": family_dir.name})
    for part, items in parts.items():
        (out / part / "labels.yaml").write_text(yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=110),
                                                encoding="utf-8")
    lines = [f"# Field sample split (seed {SEED})", "",
             "Drawn by tools/field_split.py: one third of each family, at random, is the holdout.", ""]
    for part, items in parts.items():
        lines.append(f"## {part} ({len(items)} logs)")
        lines.append("")
        lines.append(", ".join(sorted(i["id"] for i in items)))
        lines.append("")
    (out / "SPLIT.md").write_text("\n".join(lines), encoding="utf-8")
    print({part: len(items) for part, items in parts.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
