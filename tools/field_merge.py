"""Merge a later wave of the field sample into dev/ and holdout/, keeping the holdout one third.

A wave is collected like the first (tests/fixtures/field/README.md): per family, real logs from
public threads walked in search order, labelled from the thread, before anything is written for
them. Run once per wave, right after collection:

    .venv/bin/python tools/field_merge.py tests/fixtures/field/incoming2 tests/fixtures/field 2 SEED

Rules, applied mechanically:
- a case whose thread is already cited anywhere in kb/entries when the wave is merged is left
  out (the atlas was written from it, so it measures nothing new); the ids left out are listed;
- per family, cases are drawn at random (seed given) into holdout/ so that each family's
  holdout stays one third of all its failure logs, healthy logs likewise over all families;
- ids become `<family>-<id>`, each label gets `wave: N`; SPLIT.md gains a section for the wave;
- each new thread is recorded in scope.tsv as in scope: from wave 37 on, collectors take only
  threads that SCOPE.md puts in scope.
"""

from __future__ import annotations

import random
import re
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"https?://[^\s'\"<>)\]]+")


def _norm(url: str) -> str:
    return url.split("#", 1)[0].rstrip("/")


def cited_threads(entries: Path) -> set[str]:
    """Every URL the corpus cites (references, example sources, operator sources), normalised."""
    urls: set[str] = set()
    for path in entries.rglob("*.yaml"):
        urls.update(_norm(u) for u in URL.findall(path.read_text(encoding="utf-8")))
    return urls


def _load(part: Path) -> list[dict]:
    return yaml.safe_load((part / "labels.yaml").read_text(encoding="utf-8")) or []


def read_scope(table: Path) -> dict[str, str]:
    """scope.tsv: per source URL, 'in' or 'out' of the brief's reader's scope (SCOPE.md)."""
    rows = (line.split("\t") for line in table.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
    return {row[0]: row[1] for row in rows}


def record_scope(table: Path, sources: list[str], wave: int) -> None:
    """Add the wave's threads that scope.tsv lacks, as in scope (their collector took them under
    SCOPE.md's rule)."""
    known = read_scope(table)
    fresh = [u for u in dict.fromkeys(map(_norm, sources)) if u not in known]
    with table.open("a", encoding="utf-8") as fh:
        fh.writelines(f"{u}\tin\tcollected under SCOPE.md (wave {wave})\n" for u in fresh)


def main(incoming: Path, out: Path, wave: int, seed: int) -> int:
    rng = random.Random(seed)
    cited = cited_threads(ROOT / "kb" / "entries")
    parts = {name: _load(out / name) for name in ("dev", "holdout")}
    taken: list[tuple[Path, dict]] = []
    left_out: list[str] = []
    for family_dir in sorted(p for p in incoming.iterdir() if p.is_dir()):
        for item in yaml.safe_load((family_dir / "labels.yaml").read_text(encoding="utf-8")):
            case = f"{family_dir.name}-{item['id']}"
            if _norm(item["source"]) in cited:
                left_out.append(case)
            else:
                taken.append((family_dir, {**item, "id": case, "family": family_dir.name, "wave": wave}))

    def failing(items: list[dict], family: str) -> int:
        return sum(1 for i in items if i["family"] == family and i["expected"] != "none")

    held: set[str] = set()
    for family in sorted({i["family"] for _, i in taken}):
        new = sorted(i["id"] for _, i in taken if i["family"] == family and i["expected"] != "none")
        total = failing(parts["dev"], family) + failing(parts["holdout"], family) + len(new)
        want = max(0, min(len(new), round(total / 3) - failing(parts["holdout"], family)))
        held.update(rng.sample(new, want))
    healthy_new = sorted(i["id"] for _, i in taken if i["expected"] == "none")
    healthy_all = sum(1 for p in parts.values() for i in p if i["expected"] == "none") + len(healthy_new)
    healthy_held = sum(1 for i in parts["holdout"] if i["expected"] == "none")
    held.update(rng.sample(healthy_new, max(0, min(len(healthy_new), round(healthy_all / 3) - healthy_held))))

    added = {"dev": [], "holdout": []}
    for family_dir, item in taken:
        part = "holdout" if item["id"] in held else "dev"
        (out / part / "cases").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(family_dir / f"{item['id'].split('-')[-1]}.log", out / part / "cases" / f"{item['id']}.log")
        parts[part].append(item)
        added[part].append(item["id"])
    for name, items in parts.items():
        (out / name / "labels.yaml").write_text(
            yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
    lines = ["", f"## Wave {wave} (seed {seed}, merged by tools/field_merge.py)", ""]
    for name in ("dev", "holdout"):
        lines += [f"{name} (+{len(added[name])}): " + ", ".join(sorted(added[name])), ""]
    lines += [f"left out, thread already cited by kb/entries at merge time ({len(left_out)}): "
              + (", ".join(sorted(left_out)) or "none"), ""]
    with (out / "SPLIT.md").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    record_scope(out / "scope.tsv", [i["source"] for _, i in taken], wave)
    print({k: len(v) for k, v in added.items()}, "left out:", len(left_out))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
