"""A compact, deterministic sample of healthy log lines, to measure how common a literal is.

The lines are the project's own benchmark noise (training progress and tqdm bars, NCCL
INFO, healthy kernel and driver lines, nvidia-smi rows, warnings, kubelet and Slurm lines,
including near misses that share words with real signatures): bench/noise.py renders these
templates into its big logs, and validation renders a few thousand lines with a fixed seed,
so it needs neither the bench folder nor the corpus.

``share`` tells which fraction of these lines holds one of a signature's literals: the
lines the matcher would run that signature's pattern on, in a log where nothing failed.
"""

from __future__ import annotations

import functools
import random

TEMPLATES = (
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
)

LINES = 3000  # 1 % is 30 lines: enough that one template's rare variant does not tip a literal over
SEED = 7


def render(rng: random.Random, template: str) -> str:
    """One line from a template, its numbers and names drawn from ``rng`` (bench/noise.py too)."""
    return template.format(
        r=rng.randrange(16), r2=rng.randrange(16), n=rng.randrange(100000), f=rng.random() * 4,
        g=rng.random() * 700, host=f"node{rng.randrange(64):02d}", pid=rng.randrange(1000, 99999),
        c=rng.randrange(32), t=rng.random() * 1e6, p=rng.randrange(100), bar="█" * rng.randrange(10),
        date=f"2024-08-30 11:{rng.randrange(60):02d}:{rng.randrange(60):02d},123",
    )


@functools.cache
def sample() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sample's lines, and the same lines lower-cased (built once, on first use: ~30 ms)."""
    rng = random.Random(SEED)
    lines = tuple(render(rng, rng.choice(TEMPLATES)).replace("\n", " ") for _ in range(LINES))
    return lines, tuple(line.lower() for line in lines)


@functools.cache
def _text(ignore_case: bool) -> str:
    """The sample as one text, a line break after each line: one C-level scan per literal."""
    return "".join(line + "\n" for line in sample()[ignore_case])


@functools.lru_cache(maxsize=4096)
def share(literals: tuple[str, ...], ignore_case: bool) -> float:
    """The fraction of sample lines that hold at least one of ``literals`` (lower-case literals
    are looked for in lower-cased lines when ``ignore_case``)."""
    text = _text(ignore_case)
    ends: set[int] = set()  # each line found, by the offset of its line break
    for literal in literals:
        if not literal or "\n" in literal:
            continue  # no line holds a line break
        at = text.find(literal)
        while at >= 0:
            end = text.index("\n", at)
            ends.add(end)
            at = text.find(literal, end + 1)
    return len(ends) / LINES
