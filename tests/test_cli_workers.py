"""`kb diagnose --jobs`: workers inherit the parent's diagnoser (generator/cli/workers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import generator.cli.diagnose as diagnose_cli
from generator.cli.workers import diagnose_in_workers
from test_diagnose_cli import _small_checkout

XID79 = b"[ 5.0] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
OOM = b"[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers inherit the diagnoser only where the platform forks")
def test_forked_workers_use_the_parent_diagnoser_and_build_none(tmp_path: Path, monkeypatch) -> None:
    root = _small_checkout(tmp_path / "checkout")
    rules = diagnose_cli.ensure_rules(None, root / "kb" / "entries", root / "build" / "rules.json")
    builds = tmp_path / "builds"
    real = diagnose_cli.make_diagnoser

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        with builds.open("a") as fh:  # a file: a forked worker's counter would not reach the parent
            fh.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(diagnose_cli, "make_diagnoser", counted)
    files = []
    for i in range(4):
        path = tmp_path / f"node-{i}.log"
        path.write_bytes(OOM * (i + 1) + (XID79 if i == 2 else b""))
        files.append(str(path))
    report = diagnose_in_workers(rules, "python", files, 3, None)
    assert builds.read_text().split() == [str(os.getpid())]  # one build, in the parent
    assert {f["id"] for f in report["findings"]} == {"xid-79", "cuda-out-of-memory"}
    assert [s["name"] for s in report["sources"]] == files


@pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(os, "killpg"), reason="process groups and fork")
def test_ctrl_c_to_the_process_group_stops_workers_quietly(tmp_path: Path) -> None:
    """redcli29 #11: with --jobs, Ctrl-C (SIGINT to the whole process group) printed
    'Process ForkPoolWorker-1:' and a worker's KeyboardInterrupt traceback."""
    import signal
    import subprocess
    import sys
    import time

    root = _small_checkout(tmp_path / "checkout")
    rules = root / "build" / "rules.json"
    diagnose_cli.ensure_rules(None, root / "kb" / "entries", rules)
    proc = subprocess.Popen([sys.executable, "-m", "generator", "diagnose", "--engine", "python", "--rules", str(rules),
                             "--jobs", "2", "/dev/zero", "/dev/zero"], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(4)  # past start-up: the workers are reading
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and err == "kb: interrupted\n", err


def test_a_worker_ignores_ctrl_c_and_leaves_it_to_the_parent() -> None:
    import signal

    import generator.cli.workers as workers

    previous = signal.getsignal(signal.SIGINT)
    try:
        workers._inherit(None)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
        workers._INHERITED = None
