"""tools/prefix_variants.py cuts the exception class off a line, and only that."""

from __future__ import annotations

import pytest

from tools.prefix_variants import PREFIX


@pytest.mark.parametrize(("line", "rest"), [
    ("RuntimeError: CUDA error: an illegal memory access was encountered",
     "CUDA error: an illegal memory access was encountered"),
    ("_pickle.PicklingError: Can't pickle <function f at 0x7f>: it's not the same object as __main__.f",
     "Can't pickle <function f at 0x7f>: it's not the same object as __main__.f"),
    ("[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970",
     "NCCL error in: ProcessGroupNCCL.cpp:1970"),
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
     "The actor died unexpectedly before finishing this task."),
])
def test_the_exception_class_and_what_precedes_it_are_cut(line: str, rest: str) -> None:
    m = PREFIX.match(line)
    assert m and line[m.end():] == rest


@pytest.mark.parametrize("line", [
    "NCCL WARN Failed to open libibverbs.so[.1]",
    "nvidia-container-cli: initialization error: nvml error: driver not loaded",
    "Error while loading shared libraries",
])
def test_a_line_without_an_exception_class_is_left_alone(line: str) -> None:
    assert PREFIX.match(line) is None
