"""The corpus's categories and their page titles (no dependencies: the CLI imports this at start-up)."""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = (
    "xid",
    "cuda",
    "nccl",
    "distributed",
    "framework",
    "data",
    "numerics",
    "storage",
    "host",
    "hardware",
    "fabric",
    "platform",
)

CATEGORY_TITLES: dict[str, str] = {
    "xid": "NVIDIA Xid errors",
    "cuda": "CUDA runtime and libraries",
    "nccl": "NCCL",
    "distributed": "torch.distributed and launchers",
    "framework": "Framework errors",
    "data": "Data pipeline",
    "numerics": "Numerics",
    "storage": "Storage and checkpoints",
    "host": "Host and kernel",
    "hardware": "GPU hardware",
    "fabric": "NVLink, NVSwitch and fabric",
    "platform": "Schedulers and platforms",
}
