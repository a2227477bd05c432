"""Apply the field sample's label equivalences: ids that name the same root cause in two words.

When the corpus gains an entry that names a failure more precisely than the id a label was
written with (the collectors labelled logs before these entries existed), both ids become
acceptable, by rule, in dev and holdout alike (a rule in ONE_WAY only for labels written with its
first id). The rule reads only labels, never the holdout's cases or results. Each rule is listed
here with why; rerunning the script changes nothing once applied.

    .venv/bin/python tools/field_equivalents.py tests/fixtures/field
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

# (family or None for all, expected id, id that names the same root cause, why)
RULES = [
    (None, "nvml-driver-library-mismatch", "driver-api-mismatch",
     "the kernel's NVRM 'API mismatch' and NVML's 'Driver/library version mismatch' both mean user space "
     "and kernel module come from different driver versions"),
    ("jax-tf", "cuda-out-of-memory", "jax-xla-out-of-memory",
     "XLA's RESOURCE_EXHAUSTED out of memory is the JAX form of the GPU running out of memory"),
    (None, "k8s-device-plugin-nvml-load-failed", "k8s-nvidia-runtime-not-default",
     "the proposed id was written as the entry k8s-nvidia-runtime-not-default: a pod started without the NVIDIA "
     "runtime gets no driver library, so the device plugin cannot load NVML"),
    (None, "container-runtime-legacy-invocation", "container-nvidia-runtime-not-registered",
     "the proposed id was written as the entry container-nvidia-runtime-not-registered (--runtime=nvidia with no "
     "runtime of that name registered)"),
    (None, "cuda-driver-insufficient", "cuda-unsupported-ptx-version",
     "CUDA error 222 (PTX from an unsupported toolchain) is the driver being older than the toolkit that "
     "compiled the code, named by the message the driver gives when it must compile that PTX itself"),
    (None, "slurm-login-node-no-gpu", "host-nvidia-smi-not-found",
     "the proposed id was written as the general entry host-nvidia-smi-not-found: 'nvidia-smi: command not found' "
     "is the same line on a login node, a host without a driver and a container started without GPUs, and the "
     "entry lists the login or CPU node first among its causes"),
    (None, "cuda-compiler-killed-out-of-memory", "build-compiler-killed",
     "the proposed id names what the existing entry build-compiler-killed already covers: a compiler of a driver "
     "or extension build (gcc's cc1plus, nvcc's cicc or ptxas) killed by the kernel, usually for lack of memory"),
    (None, "deepspeed-zero-no-sync-incompatible", "deepspeed-zero-no-sync-unsupported",
     "the proposed id names the class of the entry deepspeed-zero-no-sync-unsupported, written in session 8's "
     "source sweep of DeepSpeed (ZeRO stage 2/3 refuses the no_sync context manager: 'no_sync context manager "
     "is incompatible with gradient partitioning')"),
    (None, "tensorrt-engine-incompatible-device", "tensorrt-engine-cross-device-model-warning",
     "both name a TensorRT engine used on a GPU other than the one it was built on: a different compute "
     "capability is refused (the failure), a different model of the same capability loads with a warning "
     "(the note, the only line when the run fails after it)"),
    (None, "fsdp2-mixed-precision-frozen-lazy-init-grad-dtype", "fsdp-mixed-precision-grad-dtype-mismatch",
     "the proposed id was written as the broader entry fsdp-mixed-precision-grad-dtype-mismatch: PyTorch's check "
     "of a gradient's dtype against its parameter's, which several FSDP mixed-precision bugs trip, the FSDP2 "
     "frozen-parameter one among them (its workaround is that entry's first fix)"),
]

# One way only: a case labelled with the first id also accepts the second, not the reverse (the
# second names more causes than the first)
ONE_WAY = [
    (None, "driver-not-loaded", "container-toolkit-library-missing",
     "the container hook's 'nvml error: driver not loaded' is the host's kernel module not loaded, seen through "
     "the NVIDIA Container Toolkit: the entry container-toolkit-library-missing names that variant and gives "
     "the same fix (load the module, find why it was not). Not the reverse: that entry's other causes (no "
     "libnvidia-ml.so.1, a sandboxed engine, WSL) are not a module left unloaded"),
    (None, "container-nvidia-smi-not-found", "host-nvidia-smi-not-found",
     "the general entry names a container started without GPUs among the places 'nvidia-smi: command not "
     "found' comes from, with the same fix (start it with --gpus); where the shell prints the line without "
     "the container engine's own wording, the log cannot tell the container from a host. Not the reverse: a "
     "login node or a host without the driver is no container"),
]


def apply(labels: list[dict]) -> int:
    changed = 0
    pairs = [(f, a, b) for f, e, x, _why in RULES for a, b in ((e, x), (x, e))]
    pairs += [(f, e, x) for f, e, x, _why in ONE_WAY]
    for item in labels:
        for family, a, b in pairs:
            if family in (None, item.get("family")) and item["expected"] == a \
                    and b not in (item.get("also_acceptable") or []):
                item["also_acceptable"] = [*(item.get("also_acceptable") or []), b]
                changed += 1
    return changed


def main(folder: Path) -> int:
    for part in ("dev", "holdout"):
        path = folder / part / "labels.yaml"
        labels = yaml.safe_load(path.read_text(encoding="utf-8"))
        changed = apply(labels)
        path.write_text(yaml.safe_dump(labels, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
        print(f"{part}: {changed} labels gained an equivalent id")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
