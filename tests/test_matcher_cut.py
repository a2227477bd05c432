"""generator/matcher/cut.py and its note: a log that stops inside a Python traceback says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_kb
from generator.matcher.cut import ends_in_traceback

HEADER = "Traceback (most recent call last):\n"
FRAME = '  File "train.py", line 10, in <module>\n'
SOURCE = "    model.cuda()\n"
TORCH_FRAME = '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 905, in cuda\n'
TORCH_SOURCE = "    return self._apply(lambda t: t.cuda(device))\n"


def _lines(text: str) -> list[tuple[int, bytes]]:
    return list(enumerate(text.encode().split(b"\n"), 1))


@pytest.mark.parametrize("text, line", [
    (HEADER + FRAME + SOURCE, 2),  # stops after a frame's source line
    (HEADER + FRAME + SOURCE + TORCH_FRAME + TORCH_SOURCE, 4),  # the last frame counts
    (HEADER + FRAME, 2),  # stops on a frame
    (HEADER, 1),  # stops on the header
    (FRAME + SOURCE, 1),  # a search excerpt that starts inside the frames
    (HEADER + FRAME + SOURCE + "    ^^^^^^^^^^^^\n\n\n", 2),  # Python 3.11 markers, blank lines after
    ("[rank0]: " + HEADER + "[rank0]: " + FRAME + "[rank0]: " + SOURCE, 2),  # behind a launcher's head
    ("RuntimeError: x\n\nDuring handling of the above exception, another exception occurred:\n\n", 3),
    (HEADER + FRAME + SOURCE + "\r\n", 2),
])
def test_a_traceback_cut_before_its_exception_line_is_found(text: str, line: int) -> None:
    assert ends_in_traceback(_lines(text)) == line


@pytest.mark.parametrize("text", [
    HEADER + FRAME + SOURCE + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    "[rank0]: " + HEADER + "[rank0]: " + FRAME + "[rank0]: " + SOURCE + "[rank0]: RuntimeError: boom\n",
    HEADER + FRAME + SOURCE + "KeyboardInterrupt\n",  # an exception without a message
    FRAME + SOURCE + "epoch 3 loss 0.21\n",  # other output after the frames
    "epoch 1 loss 0.3\nepoch 2 loss 0.2\n",
    "",
    'logging.info("File \\"x\\", line 3")\n',  # a frame's words quoted in another line, then the end
])
def test_a_finished_traceback_or_no_traceback_is_not_cut(text: str) -> None:
    assert ends_in_traceback(_lines(text)) is None


def _notes(tmp_path: Path, text: str, *args: str) -> list[str]:
    log = tmp_path / "job.log"
    log.write_text(text, encoding="utf-8")
    result = run_kb("diagnose", str(log), "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)["notes"]


def test_a_log_without_a_failure_that_stops_in_a_traceback_says_what_to_paste(tmp_path: Path) -> None:
    notes = _notes(tmp_path, HEADER + FRAME + SOURCE + TORCH_FRAME + TORCH_SOURCE)
    assert len(notes) == 1
    assert notes[0].startswith(f"{tmp_path / 'job.log'}: the log stops inside a Python traceback (line 4), before the line "
                               "that names the exception")
    text = run_kb("diagnose", str(tmp_path / "job.log")).out
    assert "the log stops inside a Python traceback (line 4)" in text and "No known failure found" in text


def test_no_cut_note_when_a_failure_is_found_or_the_traceback_is_whole(tmp_path: Path) -> None:
    found = "RuntimeError: CUDA error: an illegal memory access was encountered\n" + HEADER + FRAME + SOURCE
    assert _notes(tmp_path, found) == []
    assert _notes(tmp_path, HEADER + FRAME + SOURCE + "ValueError: bad shape\n") == []


def test_the_note_comes_back_from_worker_processes(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "rank-0.log").write_text("epoch 1 loss 0.3\n", encoding="utf-8")
    (job / "rank-1.log").write_text(HEADER + FRAME + SOURCE, encoding="utf-8")
    for jobs in ("1", "2"):
        result = run_kb("diagnose", str(job), "--format", "json", "--jobs", jobs)
        notes = json.loads(result.out)["notes"]
        assert len(notes) == 1, jobs
        assert notes[0].startswith(f"{job / 'rank-1.log'}: the log stops inside a Python traceback (line 2)"), jobs
