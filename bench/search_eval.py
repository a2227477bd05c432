"""Score the site search on the field sample: what a first visitor pastes into the search box.

The field sample (tests/fixtures/field) holds real logs posted in public threads, each labelled
with the failure the thread established. A visitor who does not open the log doctor pastes into
the header's search box, either the whole excerpt or the one line that looks like the error.
For each failure log of the dev part and of the untouched holdout this runs the site's own
ranking (docs/javascripts/kb-search.js, in headless Chromium, on the built site's index) on:

- the whole log as posted (the search reads its first 200 lines, as in the box);
- its last line that says something went wrong, read as the closest wording reads lines
  (``resemble.says_wrong``: error, failed, cannot, not found, ...; not at INFO or DEBUG level),
  as a visitor who copies the error line would without knowing which one names the failure
  (logs without one are counted apart);
- the first line of the failure the log doctor names as the root cause, as a visitor who copies the line
  that names the failure would (logs where it finds none are counted apart);

and counts the logs whose labelled entry (or one the label also accepts) comes first, or in the
first three, among the entries listed. Only the scores are printed for the holdout, never its
misses (see tests/fixtures/field/README.md); ``--misses`` prints the dev part's misses.

Writes the "Site search" section of bench/results.md.

Usage: python bench/search_eval.py [--site DIR] [--misses]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, launch  # noqa: E402
from results_file import section_head, write_section  # noqa: E402
from site_server import SiteServer  # noqa: E402

sys.path.insert(0, str(ROOT))
from generator.cli.diagnose import make_diagnoser  # noqa: E402
from generator.matcher.resemble import says_wrong  # noqa: E402

FIELD = ROOT / "tests" / "fixtures" / "field"
KINDS = (("whole", "the whole log as posted"), ("error", "its last line that looks like an error"),
         ("named", "the first line of the failure the log doctor names as the root cause"))


def cases(part: str) -> list[dict]:
    """The failure logs of one part: id, family, acceptable entries and the log's text."""
    labels = yaml.safe_load((FIELD / part / "labels.yaml").read_text(encoding="utf-8"))
    out = []
    for label in labels:
        expected = str(label.get("expected") or "none")
        if expected == "none":
            continue
        text = (FIELD / part / "cases" / f"{label['id']}.log").read_bytes().decode("utf-8", errors="replace")
        out.append({"id": str(label["id"]), "family": label.get("family") or "", "text": text,
                    "acceptable": [expected, *[str(a) for a in (label.get("also_acceptable") or [])]]})
    return out


def error_line(text: str) -> str | None:
    """The last line that says something went wrong (as the closest wording reads lines), or None."""
    found = None
    for line in text.splitlines():
        if says_wrong(line):
            found = line
    return found


def named_lines(items: list[dict], rules: dict) -> list[str | None]:
    """Per case, the first line of a failure the log doctor names as a root cause (None: it finds
    none), as the log holds it. A collateral line (torchrun's summary, the shell's 'Aborted',
    PyTorch's hint after a CUDA error) may come first but only restates the root."""
    diagnoser = make_diagnoser(rules)
    out: list[str | None] = []
    for item in items:
        report = diagnoser.diagnose(io.BytesIO(item["text"].encode("utf-8")))
        first = min((f["first_line"] for f in report["findings"] if f["role"] == "root"), default=None)
        lines = item["text"].split("\n")
        out.append(lines[first - 1] if first is not None and first <= len(lines) else None)
    return out


def score(page, index_url: str, queries: list[str]) -> tuple[list[list[str]], list[bool]]:
    """The first three entries the site search lists for each query, and whether the search
    tells the reader the list is a guess (kbSearch.weak: no entry recognises the line)."""
    tops: list[list[str]] = []
    weak: list[bool] = []
    for start in range(0, len(queries), 100):
        answers = page.evaluate("""async ([url, queries]) => {
            const index = await kbSearch.load(url);
            return queries.map(q => {
                const hits = index.search(q, 30);
                return [hits.filter(h => h.entry).slice(0, 3).map(h => h.entry.i), kbSearch.weak(hits, q)];
            });
        }""", [index_url, queries[start:start + 100]])
        tops += [top for top, _ in answers]
        weak += [flag for _, flag in answers]
    return tops, weak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one in bench/out/site)")
    parser.add_argument("--misses", action="store_true", help="print the dev part's misses (never the holdout's)")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit("the search evaluation needs /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    site = args.site
    if site is None:
        site = ROOT / "bench" / "out" / "site"
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "--strict", "-d", str(site)], cwd=ROOT, env=env, check=True)
    rules_file = next((site / "assets" / "doctor").glob("rules.*.json"))
    rules = json.loads(rules_file.read_text(encoding="utf-8"))

    rows: list[tuple[str, str, str, int, int, int]] = []  # part, family, kind, logs, top-1, top-3
    guesses: list[str] = []  # per part, how the guess notice sorts the error-looking lines
    with SiteServer(site) as server, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(server.url + "/")
        index_url = page.eval_on_selector(".kb-search", "node => node.dataset.index")
        for part in ("dev", "holdout"):
            items = cases(part)
            named = named_lines(items, rules)
            errors = [error_line(c["text"]) for c in items]
            queries = {"whole": [c["text"] for c in items], "error": [line for line in errors if line is not None],
                       "named": [line for line in named if line is not None]}
            subsets = {"whole": items, "error": [c for c, line in zip(items, errors) if line is not None],
                       "named": [c for c, line in zip(items, named) if line is not None]}
            for kind, _ in KINDS:
                subset = subsets[kind]
                tops, weak = score(page, index_url, queries[kind])
                if kind == "error":
                    right = [bool(top[:1] and top[0] in c["acceptable"]) for c, top in zip(subset, tops)]
                    flagged = sum(weak)
                    guesses.append(f"- {part}: {flagged} of {len(subset)} error-looking lines are said to be a guess, "
                                   f"{sum(r for r, w in zip(right, weak) if w)} of them with the right entry first; "
                                   f"of the {len(subset) - flagged} others, "
                                   f"{sum(r for r, w in zip(right, weak) if not w)} right first")
                for family in ["all", *sorted({c["family"] for c in items})]:
                    picked = [(c, top) for c, top in zip(subset, tops) if family in ("all", c["family"])]
                    first = sum(1 for c, top in picked if top[:1] and top[0] in c["acceptable"])
                    three = sum(1 for c, top in picked if set(top) & set(c["acceptable"]))
                    rows.append((part, family, kind, len(picked), first, three))
                if args.misses and part == "dev":
                    for c, top in zip(subset, tops):
                        if not (top[:1] and top[0] in c["acceptable"]):
                            print(f"dev {kind} {c['id']}: expected {c['acceptable'][0]}, got {top}")
        browser.close()

    def pct(n: int, d: int) -> str:
        return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "-"

    lines = [*section_head("Site search on the field sample (bench/search_eval.py)"),
             f"- Index: the built site's {index_url.rsplit('/', 1)[-1]}; corpus {len(rules['entries'])} entries, "
             f"{len(rules['signatures'])} signatures; Debian Chromium, headless",
             "- Each failure log of the field sample is searched three ways: "
             + "; ".join(f"**{k}**: {d}" for k, d in KINDS)
             + ". Right: the labelled entry (or one the label accepts) is the first entry listed (top-1) or among the first three.",
             "", "| part | family | whole log: logs, top-1, top-3 | error-looking line | line a signature names |",
             "|---|---|---|---|---|"]
    table: dict[tuple[str, str], dict[str, str]] = {}
    for part, family, kind, n, first, three in rows:
        table.setdefault((part, family), {})[kind] = f"{n}: {pct(first, n)}, {pct(three, n)}"
    for (part, family), cells in table.items():
        label = f"**{part}**" if family == "all" else part
        lines.append(f"| {label} | {family} | " + " | ".join(cells.get(kind, "-") for kind, _ in KINDS) + " |")
    lines += ["", "The guess notice (\"No entry recognises this line; these only share words with it\", "
              "WEAK_SCORE in docs/javascripts/kb-search.js, an absolute score that drifts as the corpus grows) "
              "on the error-looking lines:", "", *guesses]
    write_section("search", "\n".join(lines))
    print("\n".join(guesses))
    for part, family, kind, n, first, three in rows:
        if family == "all":
            print(f"{part} {kind}: top-1 {pct(first, n)}, top-3 {pct(three, n)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
