"""Synthetic corpora for the build benchmark: N valid entries shaped like real ones.

Entries are deterministic for a given N (seeded), spread over every category, about the
size of a full-depth real entry (prose sections, symptoms, confirm and fix steps with
commands, two signatures with examples and counter-examples, relations, references).
They exist only to measure build cost; they are written under bench/out/, never committed.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.corpus.model import CATEGORIES  # noqa: E402

WORDS = (
    "driver kernel rank collective timeout memory link device buffer channel fabric switch "
    "allocator process worker node scheduler checkpoint gradient tensor stream context queue "
    "firmware reset power thermal signal counter register bandwidth latency replay segment"
).split()


def _sentence(rng: random.Random, words: int = 14) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(chosen).capitalize() + "."


def _para(rng: random.Random, sentences: int = 3) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences)) + "\n"


def entry_id(i: int) -> str:
    """Xid entries (one category in twelve) get real-looking ids; up to 999 codes fit."""
    if CATEGORIES[i % len(CATEGORIES)] == "xid":
        return f"xid-{i // len(CATEGORIES) + 1}"
    return f"synthetic-{i:05d}"


def entry(i: int, n: int, rng: random.Random) -> dict:
    category = CATEGORIES[i % len(CATEGORIES)]
    eid = entry_id(i)
    data: dict = {
        "id": eid,
        "title": f"Synthetic failure {i}: {rng.choice(WORDS)} {rng.choice(WORDS)} error",
        "category": category,
        "severity": rng.choice(["info", "low", "medium", "high", "critical"]),
        "owner": rng.choice(["application", "framework", "driver", "hardware", "network", "platform"]),
        "tags": [rng.choice(WORDS) for _ in range(4)],
        "summary": _para(rng, 3),
        "root_cause": _para(rng, 4),
        "mechanism": _para(rng, 5),
        "at_scale": _para(rng, 3),
        "symptoms": [{"symptom": _sentence(rng), "why": _sentence(rng)} for _ in range(3)],
        "affects": [rng.choice(WORDS) for _ in range(3)],
        "confirm": [{"text": _sentence(rng), "command": f"dmesg -T | grep -E 'code {i} step {k}'"} for k in range(3)],
        "fix": [
            {"text": _sentence(rng), "command": "nvidia-smi -r -i 0", "rung": "reset-gpu"},
            {"text": _sentence(rng), "command": "sudo systemctl reboot", "rung": "reboot-node"},
            {"text": _sentence(rng), "command": "nvidia-smi -q -d ECC", "rung": "verify"},
        ],
        "prevent": [{"text": _sentence(rng)} for _ in range(2)],
        "signatures": [
            {
                "id": f"variant-{k}",
                "pattern": f"synthetic failure {i} variant {k}: [a-z]+ at step [0-9]+",
                "examples": [{"line": f"[ 12.5] synthetic failure {i} variant {k}: boom at step {j}",
                              "source": f"https://example.org/logs/{i}/{k}"} for j in range(2)],
                "counter_examples": [f"synthetic failure {i} variant {k}: recovered"],
            }
            for k in range(2)
        ],
        "related": [entry_id((i + d) % n) for d in (1, 7) if (i + d) % n != i],
        "references": [{"title": f"Reference {k}", "url": f"https://example.org/docs/{i}/{k}"} for k in range(3)],
    }
    if category == "xid":
        data["xid"] = {"code": i // len(CATEGORIES) + 1, "name": "Synthetic Xid", "immediate_action": "RESET_GPU",
                       "investigatory_action": "CONTACT_SUPPORT", "reset_required": True, "applies_to": ["A100", "H100"]}
    return data


def write_corpus(n: int, root: Path) -> Path:
    """Write N entries under ``root`` (replacing what was there); returns ``root``."""
    rng = random.Random(n)
    if root.exists():
        for path in sorted(root.rglob("*.yaml")):
            path.unlink()
    for i in range(n):
        data = entry(i, n, rng)
        folder = root / data["category"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


if __name__ == "__main__":
    print(write_corpus(int(sys.argv[1]), Path(sys.argv[2])))
