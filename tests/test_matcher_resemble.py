"""The closest wording (generator/matcher/resemble.py): leads for logs no signature matched."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import ROOT
from generator.cli.diagnose import ensure_rules, evaluate
from generator.matcher import Diagnoser
from generator.matcher.job import Job
from generator.matcher.read import Chunk
from generator.matcher.report import to_markdown, to_text
from generator.matcher.resemble import (JOIN_BYTES, JOIN_JOB_BYTES, MAX_LINES, TAIL_BYTES, THRESHOLD, Loose, Resembler, glue,
                                        TailLines, index_for, says_wrong, words)
from test_diagnose_cli import _small_checkout

INDEX = {
    "docs": {
        "gloo-connect": "connectfullmesh gloo\nconnect gloo peer refused",
        "cusolver-internal": "cusolver cusolver_status_internal_error cusolverdnsgesvdj",
        "cusolver-invalid": "cusolver cusolver_status_invalid_value",
    },
    "quiet": "cusolver cusolver_status_success cusolverdnsgesvdj",
}
# word weights are ln(N / entries using the word): a real corpus has a thousand entries
INDEX["docs"].update({f"other-{i}": f"other{i} thing{i}" for i in range(1000)})


def test_words_keep_what_names_a_failure_and_drop_numbers_hex_and_log_furniture() -> None:
    assert words("Traceback (most recent call last): RuntimeError: Gloo connectFullMesh failed 0x7f3a 12ab34 9") \
        == {"gloo", "connectfullmesh"}
    assert words("CUSOLVER_STATUS_INVALID_VALUE in cusolverDnSgesvdj_bufferSize") \
        == {"cusolver_status_invalid_value", "cusolverdnsgesvdj_buffersize"}


def test_stack_trace_headers_are_furniture_and_lead_nowhere(real_diagnoser: Diagnoser) -> None:
    """glog's and gdb's stack-trace headers end many C++ failures of every framework: they say
    nothing about which one (a PaddlePaddle log got a vLLM lead from them)."""
    assert words("*** Check failure stack trace: ***") == frozenset()
    assert words("Stack trace (most recent call first): backtrace") == {"first"}
    report = real_diagnoser.diagnose(io.BytesIO(b"F0315 10:01:02.123 12345 op.cc:42] Check failed: ok\n"
                                                b"*** Check failure stack trace: ***\n"))
    assert report["resembles"] == []


def test_a_shell_abort_line_is_furniture_and_leads_nowhere(real_diagnoser: Diagnoser) -> None:
    """'Aborted (core dumped)' ends every C++ abort, whatever aborted: a Faiss assertion above it
    got a container-hook lead from it (similarity 0.71 on 'aborted, core, dumped'). The line is
    the host-process-aborted wrapper's now, and it leads nowhere itself."""
    assert words("Aborted (core dumped)") == frozenset()
    report = real_diagnoser.diagnose(io.BytesIO(b"step 3: ok\nAborted (core dumped)\n"))
    assert [(f["id"], f["role"]) for f in report["findings"]] == [("host-process-aborted", "root")]
    assert report["resembles"] == []


def test_beside_a_wrapper_alone_the_error_lines_still_get_their_closest_wording(real_diagnoser: Diagnoser) -> None:
    """A wrapper ('Segmentation fault', torchrun's 'a worker failed') says that something stopped,
    not why: a log whose only failure is one still gets leads from its other error lines, and
    `kb eval` counts the lead first (it names a possible cause). Before, the wrapper's match
    switched the closest wording off (two holdout logs lost their right lead so)."""
    from generator.cli.diagnose import named

    # QUDA's own wording of CUDA's invalid resource handle, which no signature reads
    # (tests/fixtures/field/dev/cases/cuda-3408.log, github.com/lattice/quda/pull/125)
    log = (b"ERROR: (CUDA) invalid resource handle (cuda_color_spinor_field.cu:53 in cudaColorSpinorField())\n"
           b"Segmentation fault (core dumped)\n")
    report = real_diagnoser.diagnose(io.BytesIO(log))
    assert [(f["id"], f["role"], f["wrapper"]) for f in report["findings"]] == [("host-process-segfault", "root", True)]
    assert [r["id"] for r in report["resembles"]][:1] == ["cuda-invalid-resource-handle"]
    assert named(report)[0][0] == "cuda-invalid-resource-handle" and named(report)[0][-1] == "host-process-segfault"
    text = to_text(report)
    # the wrapper leads the findings, and is not called a root cause: it names none
    assert text.index("RESEMBLES: CUDA error: invalid resource handle") < text.index("FAILURE, CAUSE NOT RECOGNISED: Segmentation fault")
    assert "ROOT CAUSE" not in text
    assert "**Failure, cause not recognised:** [Segmentation fault" in to_markdown(report)
    assert "The failures found only say that a process stopped" in text
    assert "invalid resource handle (cuda_color_spinor_field.cu:53" in to_markdown(report)
    # with a cause found, no lead is looked for
    caused = real_diagnoser.diagnose(io.BytesIO(b"RuntimeError: CUDA error: an illegal memory access was encountered\n" + log))
    assert caused["resembles"] == [] and caused["findings"][0]["id"] == "cuda-illegal-memory-access"
    assert [(f["role"], f["wrapper"]) for f in caused["findings"]] == [("root", False), ("collateral", True)]
    # the JSON carries each finding's heading, the one wording the browser shows too
    assert [f["heading"] for f in report["findings"]] == ["Failure, cause not recognised"]
    assert [f["heading"] for f in caused["findings"]] == ["Root cause", "Collateral"]
    assert "ROOT CAUSE: CUDA error: an illegal memory access" in to_text(caused)
    assert "COLLATERAL: Segmentation fault" in to_text(caused)


def test_a_wrappers_lines_are_quiet_and_lead_nowhere() -> None:
    """A wrapper's own lines name no cause: they are indexed as quiet lines, like a note's."""
    crash = _entry("process-crashed", ["Segmentation fault in worker zorblax quux"], wrapper=True)
    index = index_for(_corpus_of(crash))
    assert "process-crashed" not in index["docs"]
    assert Resembler(index).closest([Loose(0, 1, "error: Segmentation fault in worker zorblax quux")]) == []


def test_a_line_sharing_the_distinctive_words_of_an_example_resembles_its_entry() -> None:
    r = Resembler(INDEX)
    found = r.closest([Loose(0, 7, "RuntimeError: [enforce fail] Gloo connectFullMesh failed ...")])
    assert [f["id"] for f in found] == ["gloo-connect"]
    assert found[0]["line"] == 7 and found[0]["shared_words"] == ["connectfullmesh", "gloo"]
    assert THRESHOLD <= found[0]["similarity"] <= 1


def test_the_status_word_the_line_carries_picks_the_sibling_entry() -> None:
    r = Resembler(INDEX)
    found = r.closest([Loose(0, 1, "cusolver error: CUSOLVER_STATUS_INVALID_VALUE, when calling cusolverDnSgesvdj")])
    assert found and found[0]["id"] == "cusolver-invalid"


def test_a_line_closer_to_a_counter_example_or_a_note_stays_quiet() -> None:
    r = Resembler(INDEX)
    assert r.closest([Loose(0, 1, "cusolverDnSgesvdj returned CUSOLVER_STATUS_SUCCESS, failed nothing")]) == []


def test_one_shared_common_word_is_not_enough() -> None:
    r = Resembler(INDEX)
    assert r.closest([Loose(0, 1, "error: cannot connect to the display")]) == []


def test_a_line_cut_inside_its_last_word_counts_the_words_that_begin_with_it() -> None:
    """A search excerpt stops mid-word: '... failed to initialize CUDA: forward com' (a line of
    ollama/ollama#12666). The fragment counts as the example's word it begins ('compatibility'),
    so the sibling that names forward compatibility wins over the catch-all that shares only the
    words before the cut; a whole last word still counts as itself."""
    index = {"docs": dict(INDEX["docs"]), "quiet": ""}
    index["docs"].update({
        "compat-unsupported": "attempted compatibility cuda forward ggml_cuda_init hw initialize supported",
        "unknown-error": "cuda ggml_cuda_init initialize unknown",
        "compiled": "compiled ggml offload support",
    })
    index["docs"].update({f"uses-cuda-{i}": "cuda" for i in range(300)})
    r = Resembler(index)
    cut = r.closest([Loose(0, 15, "ggml_cuda_init: failed to initialize CUDA: forward com")])
    assert [f["id"] for f in cut][:2] == ["compat-unsupported", "unknown-error"], cut
    whole = r.closest([Loose(0, 15, "ggml_cuda_init: failed to initialize CUDA: unknown")])
    assert whole and whole[0]["id"] == "unknown-error", whole


def test_a_line_cut_inside_its_first_word_counts_the_words_that_end_with_it() -> None:
    """A search excerpt also starts mid-word ('udnn_ops_infer64_8.dll' for cuDNN's
    'cudnn_ops_infer64_8.dll'): the first word counts as the example's word it ends, so the
    entry that names that library wins over one that shares only the words after the cut."""
    index = {"docs": dict(INDEX["docs"]), "quiet": ""}
    index["docs"].update({
        "cudnn-dll": "could cudnn_ops_infer64_8 dll load",
        "other-dll": "could dll load zlibwapi",
    })
    index["docs"].update({f"uses-dll-{i}": "dll" for i in range(300)})
    r = Resembler(index)
    cut = r.closest([Loose(0, 2, "udnn_ops_infer64_8.dll. Could not load zlib")])
    assert cut and cut[0]["id"] == "cudnn-dll", cut
    assert r.closest([Loose(0, 2, "Could not load zlibwapi.dll")])[0]["id"] == "other-dll"


def test_an_empty_index_finds_nothing() -> None:
    assert Resembler(None).closest([Loose(0, 1, "Gloo connectFullMesh failed")]) == []


def _chunks(text: bytes, size: int) -> list[Chunk]:
    """``text`` cut into line-aligned chunks of about ``size`` bytes, numbered as the reader numbers them."""
    out, line, start = [], 1, 0
    while start < len(text):
        end = text.find(b"\n", start + size)
        end = len(text) if end < 0 else end + 1
        data = text[start:end]
        out.append(Chunk(data, line))
        line += data.count(b"\n")
        start = end
    return out


def test_the_tail_keeps_error_looking_lines_of_the_last_mebibyte_with_their_line_numbers() -> None:
    filler = b"step 12 loss 0.53 all good here\n" * (TAIL_BYTES // 32 + 10)
    text = b"early: Gloo connectFullMesh failed\n" + filler + b"late: Gloo connectFullMesh failed again\nnothing wrong\n"
    tail = TailLines()
    for chunk in _chunks(text, 64 * 1024):
        tail.add(chunk)
    assert tail.size <= TAIL_BYTES + 2 * 64 * 1024  # whole chunks beyond the last mebibyte are let go
    taken = tail.take(3, 10)
    n = text.count(b"\n") - 1  # the line number of "late: ..."
    assert [(t.source, t.line, t.text) for t in taken] == [(3, n, "late: Gloo connectFullMesh failed again")]
    assert not tail.chunks and tail.size == 0  # taking lets the chunks go


def test_the_tail_keeps_each_wording_once_and_at_most_the_limit_the_last_ones() -> None:
    text = b"".join(b"Gloo connectFullMesh failed on peer %d\n" % i for i in range(5))
    text += b"".join(b"error: CUSOLVER_STATUS_INVALID_VALUE in call%s\n" % bytes([97 + i]) for i in range(5))
    tail = TailLines()
    tail.add(Chunk(text, 1))
    taken = tail.take(0, 3)
    assert [t.line for t in taken] == [8, 9, 10]  # digits are not words: the Gloo lines are one wording


def _job(diagnoser: Diagnoser, logs: list[bytes]) -> dict:
    job = Job(diagnoser)
    for i, data in enumerate(logs):
        job.read(f"node{i}.log", io.BytesIO(data))
    return job.finish()


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Diagnoser:
    """A Diagnoser over three real entries (xid-79, cuda-out-of-memory, nccl-remote-error)."""
    root = _small_checkout(tmp_path_factory.mktemp("small"))
    rules = ensure_rules(None, root / "kb" / "entries", root / "build" / "rules.json")
    return Diagnoser(rules)


REWORDED = b"ERROR ProcessGroup aborted: the remote process exited, or a network error happened (NCCL)\n"


def test_a_reworded_failure_that_no_signature_matches_gets_a_lead_not_a_finding(small: Diagnoser) -> None:
    report = small.diagnose(io.BytesIO(b"epoch 3 step 100 loss 0.3\n" + REWORDED))
    assert report["findings"] == [] and report["verdict"] == "no known failure found"
    assert [r["id"] for r in report["resembles"]] == ["nccl-remote-error"]
    lead = report["resembles"][0]
    assert lead["line"] == 2 and lead["text"] == REWORDED.decode().strip()
    assert {"remote", "exited", "network"} <= set(lead["shared_words"])
    assert lead["url"].endswith("entries/nccl-remote-error/") and lead["title"] == small.rules["entries"]["nccl-remote-error"]["title"]
    text = to_text(report)
    assert "No known failure found." in text and "RESEMBLES: " + lead["title"] in text
    assert "line 2 | " + lead["text"] in text
    assert "resemble" not in to_text(small.diagnose(io.BytesIO(b"all fine\n")))
    assert f"[{lead['title']}]({lead['url']})" in to_markdown(report)
    assert json.loads(json.dumps(report))["resembles"][0]["similarity"] == lead["similarity"]


def test_no_lead_when_a_signature_named_the_failure(small: Diagnoser) -> None:
    report = small.diagnose(io.BytesIO(REWORDED + b"RuntimeError: CUDA error: out of memory\n"))
    assert [f["id"] for f in report["findings"]] == ["cuda-out-of-memory"]
    assert report["resembles"] == []


def test_leads_across_files_name_their_source_and_worker_partials_agree(small: Diagnoser) -> None:
    logs = [b"all fine\n", b"fine too\n" + REWORDED]
    one = _job(small, logs)
    assert one["resembles"][0]["source"] == 1 and one["resembles"][0]["line"] == 2
    parent = Job(small)
    for data, name in zip(logs, ("node0.log", "node1.log")):
        worker = Job(small)
        worker.read(name, io.BytesIO(data))
        parent.merge(worker.partial())
    assert parent.finish()["resembles"] == one["resembles"]


def test_the_lines_kept_per_job_are_bounded(small: Diagnoser) -> None:
    job = Job(small)
    many = b"".join(b"fatal: widget%s exploded\n" % bytes([97 + i % 26, 97 + i // 26 % 26, 97 + i // 676])
                    for i in range(MAX_LINES + 50))
    job.read("a.log", io.BytesIO(many))
    job.read("b.log", io.BytesIO(REWORDED))
    assert len(job.loose) == MAX_LINES
    assert job.finish()["resembles"] == []  # the second file came after the bound


def test_the_index_holds_examples_per_entry_and_quiet_lines_from_counter_examples_and_notes() -> None:
    from generator.corpus.validated import load_corpus

    corpus = load_corpus(ROOT / "kb" / "entries")
    index = index_for(corpus.entries)
    notes = [e for e in corpus.entries if e.severity == "info"]
    assert notes and all(e.id not in index["docs"] for e in notes)
    oom = next(e for e in corpus.entries if e.id == "cuda-out-of-memory")
    lines = index["docs"]["cuda-out-of-memory"].split("\n")
    assert " ".join(sorted(words(oom.signatures[0].examples[0].line))) in lines
    quiet = set(index["quiet"].split("\n"))
    counter = next(c for s in oom.signatures for c in s.counter_examples if len(words(c)) >= 2)
    assert " ".join(sorted(words(counter))) in quiet
    assert len(lines) == len(set(lines))


def test_eval_counts_a_right_lead_and_a_lead_on_a_healthy_log_as_a_false_alarm(small: Diagnoser, tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.log").write_bytes(REWORDED)
    (tmp_path / "cases" / "b.log").write_bytes(REWORDED)
    (tmp_path / "labels.yaml").write_text("- {id: a, expected: nccl-remote-error}\n- {id: b, expected: none}\n",
                                          encoding="utf-8")
    a, b = evaluate(tmp_path, small)
    assert a.top1 and a.resembled and a.got == ["nccl-remote-error"]
    assert not b.top1 and b.resembled


def test_a_redacted_report_hides_hosts_and_addresses_in_the_lead_line(small: Diagnoser) -> None:
    from generator.matcher.redact import Redactor

    line = b"gpu-node-17.corp.example.com 10.4.2.17: ERROR ProcessGroup aborted: the remote process exited, or a network error happened (NCCL)\n"
    report = small.diagnose(io.BytesIO(line))
    assert report["resembles"] and "10.4.2.17" in report["resembles"][0]["text"]
    safe = Redactor().redact_report(report)
    assert safe["resembles"][0]["id"] == "nccl-remote-error"
    assert "10.4.2.17" not in json.dumps(safe) and "corp.example.com" not in json.dumps(safe)


def test_a_line_its_logger_files_at_info_or_debug_is_not_compared() -> None:
    tail = TailLines()
    tail.add(Chunk(b"2024-08-30 11:01:42,123 INFO Watchdog heartbeat ok (collective timeout 600000 ms)\n"
                   b"[DEBUG] retrying after connection refused\n"
                   b"2024-08-30 11:01:43,001 ERROR collective timeout after 600000 ms\n", 1))
    assert [t.line for t in tail.take(0, 10)] == [3]


def test_a_level_word_inside_the_failure_message_does_not_make_it_routine() -> None:
    """Paddle's 'ValueError: (InvalidArgument) some trt inputs dynamic shape info not set, check
    the INFO log above' was never compared: the INFO of its advice was read as its logger's level
    (dev field sample, each log's own thread left out). A level word counts before the failure's
    words only."""
    assert says_wrong("ValueError: (InvalidArgument) some trt inputs dynamic shape info not set, check the INFO log above for more details.")
    assert says_wrong("RuntimeError: NCCL error, see the DEBUG output (NCCL_DEBUG=INFO) for details")
    assert not says_wrong("2024-08-30 11:01:42,123 INFO Watchdog heartbeat ok (collective timeout 600000 ms)")
    assert not says_wrong("node1:22:22 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol")
    assert not says_wrong("[DEBUG] retrying after connection refused")


def test_the_bench_noise_near_misses_get_neither_a_finding_nor_a_lead(real_diagnoser: Diagnoser) -> None:
    """bench/noise.py's healthy lines are written to share words with real failures."""
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    from noise import NOISE

    text = "\n".join(t.format(r=3, r2=4, n=1200, f=0.5, g=300.0, host="node07", pid=4242, c=5, t=1234.5, p=40,
                              bar="██", date="2024-08-30 11:01:42,123") for t in NOISE) + "\n"
    report = real_diagnoser.diagnose(io.BytesIO(text.encode()))
    assert report["findings"] == [] and report["resembles"] == []


def test_once_a_failure_is_found_no_input_tail_is_read(small: Diagnoser) -> None:
    """Findings only grow: after a failure no lead can be offered, so later inputs' tails are not
    decoded (in the browser that decoding cost 0.6 s on a 1 MiB log with findings)."""
    job = Job(small)
    job.read("a.log", io.BytesIO(REWORDED))
    assert [lo.text for lo in job.loose] == [REWORDED.decode().strip()]
    job.read("b.log", io.BytesIO(b"RuntimeError: CUDA error: out of memory\n" + REWORDED))
    assert job.loose == []
    job.read("c.log", io.BytesIO(REWORDED))
    assert job.loose == []
    report = job.finish()
    assert [f["id"] for f in report["findings"]] == ["cuda-out-of-memory"] and report["resembles"] == []


def test_the_tail_joins_each_two_adjacent_lines_across_chunks_within_a_byte_limit() -> None:
    tail = TailLines()
    tail.add(Chunk(b"alpha \nbeta\r\n", 1))
    tail.add(Chunk(b"gamma\n\ndelta\n", 3))
    data, firsts = tail.joined()
    assert data == b"alpha beta\nbetagamma\n" and firsts == [1, 2]  # blank lines join nothing
    assert tail.joined(limit=10) == (b"betagamma\n", [2])  # the last pairs that fit
    assert tail.joined(limit=0) == (b"", [])
    assert [t.line for t in tail.take(0, 10)] == []  # the chunks are still there for take (no error lines here)


WRAPPED = b"step 1 loss 0.3\nRuntimeError: CUDA error: out of me\nmory\n"


def test_a_failure_line_wrapped_in_two_is_found_whole_at_its_first_line(small: Diagnoser) -> None:
    report = small.diagnose(io.BytesIO(WRAPPED))
    assert [(f["id"], f["first_line"], f["fields"].get("joined")) for f in report["findings"]] == [("cuda-out-of-memory", 2, 3)]
    assert report["findings"][0]["evidence"][0]["text"] == "RuntimeError: CUDA error: out of memory"
    assert report["resembles"] == []
    assert "details: a line wrapped in two, read with line 3 joined to it" in to_text(report)
    # neither half alone is a finding, and the same lines unwrapped give no "joined" field
    assert small.diagnose(io.BytesIO(b"RuntimeError: CUDA error: out of me\n"))["findings"] == []
    plain = small.diagnose(io.BytesIO(b"RuntimeError: CUDA error: out of memory\n"))
    assert [(f["id"], "joined" in f["fields"]) for f in plain["findings"]] == [("cuda-out-of-memory", False)]
    # a worker's partial carries the joined finding as the single job does
    parent = Job(small)
    worker = Job(small)
    worker.read("node0.log", io.BytesIO(WRAPPED))
    parent.merge(worker.partial())
    assert [(f["id"], f["first_line"]) for f in parent.finish()["findings"]] == [("cuda-out-of-memory", 2)]


def test_a_message_wrapped_behind_a_repeated_head_continues_after_the_head() -> None:
    # tabbyAPI under Docker Compose, a rich traceback wrapped at a word (theroyallab/tabbyAPI#465)
    first = b"tabbyapi  |                        RuntimeError: cudaHostRegister(0x70a98bbe9000, 71397376)"
    second = b"tabbyapi  |                        failed: invalid argument"
    assert glue(first, second) == first + b" failed: invalid argument"
    assert glue(b"[rank0]: RuntimeError: CUDA error: out of", b"[rank0]: memory") == b"[rank0]: RuntimeError: CUDA error: out of memory"
    # a terminal's hard wrap repeats no head: its rows are glued as they are
    assert glue(b"RuntimeError: CUDA error: out of me", b"mory") == b"RuntimeError: CUDA error: out of memory"
    assert glue(b"alpha ", b"beta") == b"alpha beta"
    # a shared head shorter than four characters, or nothing after the head, is no head
    assert glue(b"a b", b"a c") == b"a ba c"
    assert glue(b"tabbyapi  | ", b"tabbyapi  | failed") == b"tabbyapi  | tabbyapi  | failed"


def test_a_failure_wrapped_behind_a_compose_head_is_found_whole(small: Diagnoser) -> None:
    log = b"worker-1  | step 7 loss 0.31\nworker-1  | RuntimeError: CUDA error: out of\nworker-1  | memory\n"
    report = small.diagnose(io.BytesIO(log))
    assert [(f["id"], f["first_line"], f["fields"].get("joined")) for f in report["findings"]] == [("cuda-out-of-memory", 2, 3)]


def test_lines_are_joined_only_while_no_failure_is_found_and_within_the_job_budget(small: Diagnoser) -> None:
    xid = b"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    assert [f["id"] for f in _job(small, [xid, WRAPPED])["findings"]] == ["xid-79"]
    job = Job(small)
    filler = b"".join(b"step %06d loss 0.25 lr 3e-4 tokens/s 51234\n" % i for i in range(20000))  # 880 KB
    job.read("a.log", io.BytesIO(filler))
    assert JOIN_JOB_BYTES - JOIN_BYTES <= job.join_left < JOIN_JOB_BYTES  # the input's last JOIN_BYTES only
    job.join_left = 0
    job.read("b.log", io.BytesIO(WRAPPED))
    assert job.finish()["findings"] == []  # the budget was spent


def _entry(eid: str, examples: list[str], counter: list[str] = (), severity: str = "high",  # noqa: ANN202
           wrapper: bool = False, pattern: str | None = None):
    from types import SimpleNamespace as NS

    sig = NS(examples=[NS(line=x, source="https://example.org/t") for x in examples], counter_examples=list(counter),
             pattern=pattern)
    return NS(id=eid, title=eid.replace("-", " "), aliases=[], severity=severity, signatures=[sig], wrapper=wrapper)


def _corpus_of(*entries) -> list:  # noqa: ANN002
    # word weights are ln(N / entries using the word): fill the corpus up as a real one is
    return [*entries, *(_entry(f"other-{i}", [f"other{i} thing{i} widget{i}"]) for i in range(1000))]


def test_a_counter_example_that_is_a_siblings_failure_line_keeps_the_lead_from_its_own_entry_only() -> None:
    """cuBLAS's NOT_SUPPORTED line is written down as a counter-example of the INVALID_VALUE
    signature. A reworded NOT_SUPPORTED line must still lead to the NOT_SUPPORTED entry: when
    every counter-example silenced every entry, it led nowhere (dev field sample, each log's own
    thread left out: 24 such logs)."""
    invalid = _entry("cublas-invalid", ["RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling cublasSgemm"],
                     counter=["RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasSgemm"])
    unsupported = _entry("cublas-unsupported", ["RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasSgemm",
                                                "CUBLAS_STATUS_NOT_SUPPORTED when calling cublasGemmEx with CUDA_R_16F"])
    index = index_for(_corpus_of(invalid, unsupported))
    assert "cublas-invalid" in index["near"] and "cublas_status_not_supported" not in index["quiet"]
    line = "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasSgemm( handle, opa, opb, m, n, k)`"
    found = Resembler(index).closest([Loose(0, 3, line)])
    assert [f["id"] for f in found] == ["cublas-unsupported"]


def test_a_notes_counter_example_that_a_failures_signature_matches_leaves_that_failure_its_lead() -> None:
    """The note on XLA's rematerialisation lists JAX's out-of-memory line as a counter-example
    (its signature must not read it). That line is the out-of-memory entry's failure line, which
    that entry's signature matches, not a harmless one: it must not silence the lead to that
    entry (dev field sample with each log's own thread left out: a JAX out-of-memory line whose
    signature was switched off led nowhere). The same holds for a wrapper's counter-example and
    for an entry's own line written down against another of its signatures."""
    oom_pattern = r"RESOURCE_EXHAUSTED: Out of memory while trying to allocate"
    remat = _entry("xla-remat-note", ["W hlo_rematerialization.cc:3021] Can't reduce memory use below 67GiB by rematerialization"],
                   counter=["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes."],
                   severity="info", pattern=r"Can't reduce memory use below")
    worker = _entry("launcher-worker-failed", ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED"],
                    counter=["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12 bytes"],
                    wrapper=True, pattern=r"ChildFailedError")
    oom = _entry("jax-oom", ["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes."],
                 pattern=oom_pattern)
    from types import SimpleNamespace as NS
    oom.signatures.append(NS(examples=[NS(line="BufferAssignment OOM Debugging report peak buffers", source="https://example.org/u")],
                             counter_examples=["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1024 bytes"],
                             pattern=r"BufferAssignment OOM Debugging"))
    index = index_for(_corpus_of(remat, worker, oom))
    assert "resource_exhausted" not in index["quiet"] and "resource_exhausted" not in "".join(index["near"].values())
    line = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3743729664 bytes."
    assert [f["id"] for f in Resembler(index).closest([Loose(0, 4, line)])] == ["jax-oom"]


def test_a_notes_counter_example_that_only_reads_like_a_failure_line_stays_quiet() -> None:
    """torchrun's 'failed (exitcode: -9)' reads word for word like the SIGBUS entry's 'failed
    (exitcode: -7)' (numbers are no words), but that entry's signature does not match it: written
    down beside the launcher's wrapper entry, it stays a quiet line, and a -9 line leads nowhere
    (the dev sample's torchrun logs were led to the shared-memory entry when it did not)."""
    sigbus = _entry("nccl-shm-sigbus", ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 5275) of binary: /usr/bin/python"],
                    pattern=r"failed \(exitcode: -7\) local_rank: [0-9]+")
    worker = _entry("launcher-worker-failed", ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED"],
                    counter=["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: /usr/bin/python"],
                    wrapper=True, pattern=r"ChildFailedError")
    index = index_for(_corpus_of(sigbus, worker))
    assert "exitcode" in index["quiet"]
    line = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 4411) of binary: /opt/conda/bin/python"
    assert Resembler(index).closest([Loose(0, 9, line)]) == []


def test_a_harmless_counter_example_still_silences_every_entry() -> None:
    """A counter-example no entry's failure line reads like (TensorFlow's warning that TensorRT
    is absent, printed by healthy jobs) keeps every lead away, not only its own entry's."""
    trt = _entry("tftrt-missing", ["ImportError: TF-TRT could not find libnvinfer.so.8 converter unavailable"],
                 counter=["W py_utils.cc:30] Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT"])
    gpu_libs = _entry("tf-gpu-libs", ["W gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries"])
    index = index_for(_corpus_of(trt, gpu_libs))
    assert "dlopen" in index["quiet"] and "tftrt-missing" not in index.get("near", {})
    line = "2020-07-13 19:17:18: W py_utils.cc:30] Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT"
    assert Resembler(index).closest([Loose(0, 1, line)]) == []


def test_a_failure_stated_without_the_word_error_is_compared(real_diagnoser: Diagnoser) -> None:
    """lspci's 'LnkSta: Speed 2.5GT/s (downgraded)' and a kernel's 'nvidia: Unknown symbol' say
    something failed without 'error' or 'failed': such lines are compared too."""
    from generator.matcher.resemble import _ERRORISH

    for line in ("LnkSta: Speed 2.5GT/s (downgraded), Width x16 (ok)", "nvidia: Unknown symbol i2c_get_adapter (err -22)",
                 "The engine plan file is generated on an incompatible device",
                 "ResourceExhaustedError (see above for traceback): OOM when allocating tensor"):
        assert _ERRORISH.search(line), line
    assert not _ERRORISH.search("LnkSta: Speed 16GT/s (ok), Width x16 (ok)")
    assert not _ERRORISH.search("model zoom: room for 12 more tensors")


def test_a_last_word_many_entries_use_whole_is_not_read_as_a_cut_one() -> None:
    """'Application uses missing NVIDIA GPU' ends in a whole word: reading 'gpu' as the start of
    an example's 'gpu_nvml' gave a Slurm lead on one shared word (field wave 22)."""
    index = {"docs": dict(INDEX["docs"]), "quiet": ""}
    index["docs"].update({"slurm-nvml": "gpu_nvml missing"})
    index["docs"].update({f"uses-gpu-{i}": "gpu" for i in range(300)})
    r = Resembler(index)
    assert r.closest([Loose(0, 1, "PrimeGrid | Application uses missing NVIDIA GPU")]) == []
    assert r.closest([Loose(0, 1, "slurmd: error: Application uses missing NVIDIA gpu_nv")])[0]["id"] == "slurm-nvml"
