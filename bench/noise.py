"""A large log of realistic noise with a few hundred real failure lines planted in it.

The noise imitates what surrounds a failure in practice: training progress and tqdm bars
(with carriage returns and block characters), NCCL INFO lines, healthy kernel lines,
warnings and nvidia-smi output, including near misses that share words with real
signatures. The planted failure lines are the corpus's own real example lines. The output
is deterministic for a given size; it is written under bench/out/ and never committed.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.corpus.healthy import TEMPLATES, render  # noqa: E402
from generator.corpus.validated import load_corpus  # noqa: E402

# the healthy lines' templates, shared with validation's sample (generator/corpus/healthy.py)
NOISE = list(TEMPLATES)


def write_log(path: Path, size: int, planted: int = 300, seed: int = 7) -> dict:
    rng = random.Random(seed)
    corpus = load_corpus(Path(__file__).resolve().parents[1] / "kb" / "entries")
    failures = [ex.line for e in corpus.entries for s in e.signatures for ex in s.examples]
    path.parent.mkdir(parents=True, exist_ok=True)
    lines_written = 0
    planted_lines = 0
    written = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        batch: list[str] = []
        plant_every = max(1, (size // 120) // planted)
        while written < size:
            if lines_written and lines_written % plant_every == 0 and planted_lines < planted:
                line = rng.choice(failures)
                planted_lines += 1
            else:
                line = render(rng, rng.choice(NOISE))
            batch.append(line)
            lines_written += 1
            if len(batch) >= 5000:
                text = "\n".join(batch) + "\n"
                fh.write(text)
                written += len(text.encode())
                batch = []
        if batch:
            text = "\n".join(batch) + "\n"
            fh.write(text)
    return {"lines": lines_written, "planted": planted_lines, "bytes": path.stat().st_size}


if __name__ == "__main__":
    print(write_log(Path(sys.argv[2]), int(float(sys.argv[1]) * 1024 * 1024)))
