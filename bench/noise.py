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

from generator.corpus.validated import load_corpus  # noqa: E402

NOISE = [
    "[rank{r}]: step {n} | loss {f:.4f} | lr 3.00e-04 | grad_norm {g:.3f} | tokens/s 51234",
    "{host}:{pid}:{pid} [{r}] NCCL INFO Channel {c:02d}/32 : {r} -> {r2} via P2P/IPC/read",
    "{host}:{pid}:{pid} [{r}] NCCL INFO comm 0x55d0c0 rank {r} nranks 16 cudaDev {r} busId 1b000 - Init COMPLETE",
    "[{t:.6f}] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Thu Jun  6 2024",
    "[{t:.6f}] nvidia-nvswitch{c}: open (major=510)",
    "[{t:.6f}] mlx5_core 0000:{c:02x}:00.0: Port module event: module 0, Cable plugged",
    "Epoch {n}:  {p}%|{bar}| {n}/9000 [01:{c:02d}<02:10, 7.51it/s, loss={f:.3f}]\r",
    "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 16 worker processes",
    "{date} INFO trainer.py:412 saving checkpoint to /ckpt/step_{n}.pt (error rate {f:.2f})",
    "|  {c}  NVIDIA H100 80GB HBM3  On  | 00000000:{c:02X}:00.0 Off |  0  | {g:.0f}W / 700W | 61234MiB / 81559MiB | 98% Default |",
    "{date} WARNING memory usage high on rank {r}: 71.3 GiB reserved, no out of memory yet",
    "[deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1",
    "kubelet[{pid}]: I0810 15:36:05.945123 {pid} kubelet.go:2452 \"SyncLoop (PLEG): event for pod\" pod=\"train/worker-{r}\"",
    "slurmstepd: task {r} ended normally, exitcode 0",
    "{date} INFO Watchdog heartbeat ok for process group 0 (collective timeout 600000 ms)",
]


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
                template = rng.choice(NOISE)
                line = template.format(
                    r=rng.randrange(16), r2=rng.randrange(16), n=rng.randrange(100000), f=rng.random() * 4,
                    g=rng.random() * 700, host=f"node{rng.randrange(64):02d}", pid=rng.randrange(1000, 99999),
                    c=rng.randrange(32), t=rng.random() * 1e6, p=rng.randrange(100), bar="█" * rng.randrange(10),
                    date=f"2024-08-30 11:{rng.randrange(60):02d}:{rng.randrange(60):02d},123",
                )
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
