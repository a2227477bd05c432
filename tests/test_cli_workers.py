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


def test_a_file_gone_before_it_is_dealt_is_dealt_as_empty_and_noted_by_its_worker(tmp_path: Path) -> None:
    """red31 #3: the sizes the inputs are dealt by were stat()ed bare, so a file rotated away after
    the folder was listed ended the whole run; now its worker finds it gone and notes it."""
    from generator.cli.workers import _deal

    root = _small_checkout(tmp_path / "checkout")
    rules = diagnose_cli.ensure_rules(None, root / "kb" / "entries", root / "build" / "rules.json")
    (tmp_path / "a.log").write_bytes(XID79 * 3)
    (tmp_path / "c.log").write_bytes(OOM)
    files = [str(tmp_path / "a.log"), str(tmp_path / "b.log"), str(tmp_path / "c.log")]
    assert _deal(files, 2) == [[0], [1, 2]]
    report = diagnose_in_workers(rules, "python", files, 2, None, ["earlier: a note of the walk"])
    assert report["notes"] == ["earlier: a note of the walk",
                               f"{tmp_path / 'b.log'}: cannot read it: No such file or directory; skipped"]
    assert {f["id"] for f in report["findings"]} == {"xid-79", "cuda-out-of-memory"}


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


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.mark.skipif(not hasattr(os, "fork") or not Path("/proc/self/stat").exists(), reason="fork and Linux /proc")
def test_sigterm_to_the_parent_alone_stops_its_workers(tmp_path: Path) -> None:
    """red31 #4: `kill PID` (a service manager, subprocess.terminate(), a CI runner stopping the
    main process) left the forked workers reading on, orphaned, until their share was done.
    Here one worker reads /dev/zero, which would take it minutes (16G by default)."""
    import signal
    import subprocess
    import sys
    import time

    root = _small_checkout(tmp_path / "checkout")
    rules = root / "build" / "rules.json"
    diagnose_cli.ensure_rules(None, root / "kb" / "entries", rules)
    log = tmp_path / "node-1.log"
    log.write_bytes(XID79 * 1000)
    proc = subprocess.Popen([sys.executable, "-m", "generator", "diagnose", "--engine", "python", "--rules", str(rules),
                             "--jobs", "2", str(log), "/dev/zero"], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers = _children(proc.pid)
        assert len(workers) == 2, (workers, proc.poll())
        time.sleep(1)  # the workers are reading
        os.kill(proc.pid, signal.SIGTERM)  # the parent only, not its group
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {w for w in workers if _running(w)}
        assert not left, f"workers {left} still run after the parent got SIGTERM"
        assert proc.returncode == -signal.SIGTERM, (proc.returncode, proc.stderr.read())
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in workers:
            if _running(pid):  # the orphans the parent left (without the fix)
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
