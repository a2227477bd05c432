"""The `kb rules`, `kb diagnose` and `kb eval` commands: the CLI side of the log matcher.

The matcher itself (generator/matcher) reads only a rules file. Here the CLI makes sure
that file exists and is current (rebuilding it from the corpus when an entry file was added,
removed or changed since it was built),
opens the input safely, picks the fastest scanner available and renders the report.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from generator import atomic, config
from generator.errors import CorpusError, InputError
from generator.matcher import Diagnoser, load_rules, to_json, to_markdown, to_text
from generator.matcher.job import Job
from generator.matcher.native import cache, hsscan, re2scan
from generator.matcher.redact import Redactor
from generator.matcher.rules import SEVERITIES
from generator.matcher.report import visible

# The corpus, pydantic and YAML are imported only when the rules must be rebuilt or labels
# read: a diagnosis with current rules starts in a fraction of the time.

DEFAULT_RULES = Path("build/rules.json")
ENTRIES = Path("kb/entries")


def packaged_rules() -> Path | None:
    """The rules compiled into an installed package (setup.py writes them at build time), if any."""
    path = Path(__file__).parents[1] / "data" / "rules.json"
    return path if path.is_file() else None


def ensure_rules(rules_path: Path | None, entries: Path = ENTRIES, out: Path = DEFAULT_RULES,
                 last_good: bool = False) -> dict:
    """The rules to use: the given file; in a checkout, build/rules.json rebuilt when the corpus
    changed; elsewhere, the rules compiled into the installed package.

    With ``last_good`` (`kb diagnose`), a corpus that no longer validates (an entry being
    edited) does not stop the diagnosis when rules were built before: those rules are used,
    with a warning on stderr that names the problems and says the edits are not in them.
    `kb eval`, the tests and the build stay strict."""
    if rules_path is not None:
        return _load(rules_path)
    if not entries.is_dir():
        packaged = packaged_rules()
        if packaged is not None:
            return _load(packaged)
        raise InputError(f"no corpus at {entries} and no --rules given; pass --rules PATH to a rules.json, run from a "
                         "checkout of the atlas, or install it (pip install .) so the rules come with it")
    stamp = _stamp_file(out)
    if not out.exists() or not stamp.exists() or stamp.read_text(encoding="utf-8") != inputs_stamp(entries):
        try:
            build_rules(entries, out)
        except CorpusError as exc:
            if not (last_good and out.exists() and stamp.exists()):
                raise
            _warn_last_good(exc, out)
    return _load(out)


def _warn_last_good(exc: CorpusError, out: Path) -> None:
    """Say on stderr that the corpus does not validate and which rules are used instead."""
    built = datetime.fromtimestamp(out.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    first = exc.problems[0].format().splitlines()[0] if exc.problems else ""
    sys.stderr.write(f"kb diagnose: warning: the corpus does not validate ({exc}; first: {first}); diagnosing with the "
                     f"rules last built from a valid corpus ({out}, {built}), which lack the changes since. "
                     "Run 'kb validate' to see every problem.\n")


def build_rules(entries: Path, out: Path) -> dict:
    """Compile the corpus into ``out`` and note beside it what it was built from. The stamp is
    taken before the corpus is read: a file edited while it was read leaves the stamp behind,
    so the next ``ensure_rules`` builds again."""
    from generator.corpus.validated import load_corpus
    from generator.exports.rules import write_rules

    stamp = inputs_stamp(entries)
    rules = write_rules(load_corpus(entries), out)
    atomic.write_text(_stamp_file(out), stamp)
    return rules


def _stamp_file(out: Path) -> Path:
    return out.with_name(out.name + ".inputs")


# The modules whose code shapes rules.json (the compiler, the prefilter literals, the Xid texts,
# the heads an anchored pattern may follow, the closest-wording index and its word list): an edit
# to any of them makes the rules stale.
RULES_COMPILER = ("exports/rules.py", "exports/line_heads.py", "corpus/literals.py", "matcher/parse.py",
                  "matcher/resemble.py")


def inputs_stamp(entries: Path) -> str:
    """What the compiled rules were built from: the name, size and modification time of every
    entry file and of the rules compiler's modules (RULES_COMPILER). Unlike the newest modification time alone, it changes
    when an entry is removed or renamed, and when a file was edited while a build was reading."""
    digest = hashlib.sha256()
    for path in sorted(entries.rglob("*.yaml")):
        st = path.stat()
        digest.update(f"{path.relative_to(entries).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    package = Path(__file__).parents[1]
    for name in RULES_COMPILER:
        code = (package / name).stat()
        digest.update(f"{name}\0{code.st_size}\0{code.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _load(path: Path) -> dict:
    """Load rules, checking and analysing them unless these very bytes (or this very content, by
    its verified hash) passed before on this machine; a pass is remembered in the cache folder."""
    asked: list[str] = []
    passed: list[str] = []

    def analysed(key: str) -> bool:
        asked.append(key)
        if cache.read(cache.analysed_marker(key)) is not None:
            passed.append(key)
            return True
        return False

    rules = load_rules(path, analysed)
    for key in asked:
        if key not in passed:
            cache.write(cache.analysed_marker(key), b"")
    return rules


def make_diagnoser(rules: dict, engine: str = "auto") -> Diagnoser:
    """A diagnoser whose prefilter is the engine asked for; ``auto``: Hyperscan, else RE2, else pure Python."""
    settings = config.load(Path.cwd())
    if engine == "re2" and not re2scan.available():
        raise InputError("--engine re2 needs the google-re2 package: pip install google-re2")
    if engine == "hyperscan" and not hsscan.available():
        raise InputError("--engine hyperscan needs the hyperscan package: pip install hyperscan")
    # auto: Hyperscan first (measured in bench/results.md: 3 to 4 times grep's throughput on a 400 MiB
    # log, RE2 about 1; its first run compiles its database, then finds it in the cache)
    if engine == "hyperscan" or (engine == "auto" and hsscan.available()):
        # it names the signatures that matched a line, so only those ever need compiling (their
        # patterns were checked when the rules were loaded)
        return Diagnoser(rules, scanner_factory=hsscan.HyperscanScanner.for_matcher, site_url=settings.site_url, lazy=True)
    factory = re2scan.Re2Scanner.for_matcher if engine == "re2" or (engine == "auto" and re2scan.available()) else None
    return Diagnoser(rules, scanner_factory=factory, site_url=settings.site_url)


def expand_inputs(targets: list[str], notes: list[str] | None = None) -> list[str]:
    """Files to read for ``targets``: files as given, folders walked (sorted, hidden files skipped), ``-`` once.
    A file or subfolder that vanishes (or cannot be listed) while a folder is walked is added to
    ``notes`` and skipped, as one that vanishes before it is read (``read_into``)."""
    out: list[str] = []
    notes = [] if notes is None else notes
    for target in targets:
        if target == "-":
            if "-" in out:
                raise InputError("standard input (-) was given twice; pass it once")
            out.append("-")
            continue
        path = Path(target)
        if path.is_dir():
            if not os.access(path, os.R_OK | os.X_OK):
                raise InputError(f"{target}: the folder cannot be read (permission denied); run as a user who may "
                                 "read it, or pass the files inside it")
            found = _walk(path, notes)
            if not found:
                raise InputError(f"{target}: the folder holds no files")
            out.extend(str(p) for p in found)
        elif not path.exists():
            if path.is_symlink():  # a link whose target is missing, or a loop of links
                try:
                    path.resolve(strict=True)
                except RuntimeError:
                    raise InputError(f"{target}: a loop of symbolic links; point the link at the log file") from None
                except OSError:
                    raise InputError(f"{target}: a symbolic link to {os.readlink(path)}, which does not exist") from None
            raise InputError(f"{target}: no such file")
        else:
            out.append(target)
    return out


def _walk(folder: Path, notes: list[str]) -> list[Path]:
    """The files under ``folder``, sorted, hidden ones skipped, links to folders not followed. A
    subfolder or a file that is gone by the time it is looked at (log rotation) is a note."""
    found: list[Path] = []

    def unlisted(exc: OSError) -> None:
        notes.append(f"{_cannot_read(exc.filename, exc)}; skipped")

    for top, folders, names in os.walk(folder, onerror=unlisted):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = Path(top) / name
            if path.is_file():
                found.append(path)
            elif not os.path.lexists(path):  # listed a moment ago, gone now
                notes.append(f"{_cannot_read(path, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT)))}; skipped")
    return sorted(found)


def _cannot_read(target: object, exc: OSError) -> str:
    """The words for an input that cannot be opened or listed (it vanished, or may not be read)."""
    return f"{target}: cannot read it: {exc.strerror or exc}"


def _open(target: str) -> BinaryIO:
    if target == "-":
        if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:
            raise InputError("standard input is closed; pipe a log in (dmesg | kb diagnose -) or pass a file")
        return sys.stdin.buffer
    try:
        return Path(target).open("rb")
    except OSError as exc:
        raise InputError(_cannot_read(target, exc)) from None


def diagnose_inputs(diagnoser: Diagnoser, targets: list[str], max_unpacked: int | None = None,
                    notes: list[str] | None = None, skip_unreadable: bool | None = None) -> dict:
    """One report for every input in ``targets`` (already expanded), read one after the other;
    ``notes`` (from ``expand_inputs``) come first among the report's notes."""
    job = Job(diagnoser, **({"max_unpacked": max_unpacked} if max_unpacked else {}))
    job.notes.extend(notes or [])
    read_into(job, targets, skip_unreadable)
    return job.finish()


def read_into(job: Job, targets: list[str], skip_unreadable: bool | None = None) -> None:
    """Read ``targets`` into ``job``. Among several inputs (``skip_unreadable``, the default when
    there are several), one that cannot be read is a note and the others are still read: a
    folder with one file only root may read must not lose the report on all the rest."""
    skip = len(targets) > 1 if skip_unreadable is None else skip_unreadable
    for target in targets:
        try:
            stream = _open(target)
        except InputError as exc:
            if not skip or target == "-":
                raise
            job.notes.append(f"{exc}; skipped")
            continue
        try:
            job.read("stdin" if target == "-" else target, stream)
        except OSError as exc:
            if not skip or target == "-":
                raise InputError(f"{target}: read failed: {exc.strerror or exc}") from None
            job.notes.append(f"{target}: read failed: {exc.strerror or exc}; skipped (what came before was read)")
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


SEVERITY_ORDER = SEVERITIES  # least severe first; the rules loader refuses any other severity


def worst_severity(report: dict) -> str | None:
    """The most severe failure a report names (a hang counts as high), or None when nothing failed."""
    found = [f["severity"] for f in report["findings"] if f["role"] != "info"]
    if report["verdict"].startswith("hang: "):
        found.append("high")
    return max(found, key=SEVERITY_ORDER.index) if found else None


def _gate(reports: list[dict], fail_on: str | None) -> int:
    if fail_on is None:
        return 0
    worst = [w for w in (worst_severity(r) for r in reports) if w]
    return 1 if any(SEVERITY_ORDER.index(w) >= SEVERITY_ORDER.index(fail_on) for w in worst) else 0


def run_diagnose(targets: list[str] | str, fmt: str, rules_path: Path | None, engine: str,
                 max_unpacked: int | None = None, jobs: int | None = None, fail_on: str | None = None,
                 quiet: bool = False, redact: bool = False) -> int:
    if isinstance(targets, str):
        targets = [targets]
    notes: list[str] = []  # files and subfolders that vanished while the folders were walked
    files = expand_inputs(targets, notes)
    rules = ensure_rules(rules_path, last_good=True)
    if fmt == "jsonl":  # one report per input file, each on its own line
        diagnoser = make_diagnoser(rules, engine)
        # one redactor for the whole output: a host or a user is the same placeholder on every line
        redactor = Redactor() if redact else None
        for note in notes:  # about no one input: said beside the lines, not inside one of them
            sys.stderr.write(f"kb diagnose: {visible(redactor.redact_text(note) if redactor else note)}\n")
        reports = []
        for target in files:
            # a file among several that vanished since it was listed: its line carries the note
            report = diagnose_inputs(diagnoser, [target], max_unpacked, skip_unreadable=len(files) > 1)
            report["input"]["name"] = "stdin" if target == "-" else target
            reports.append(report)
            if redactor:
                report = redactor.redact_report(report)
            if not (quiet and worst_severity(report) is None):
                sys.stdout.write(to_json(report, compact=True))
                sys.stdout.flush()
        return _gate(reports, fail_on)
    workers = min(jobs or os.cpu_count() or 1, len(files))
    if workers > 1 and "-" not in files:
        from generator.cli.workers import diagnose_in_workers  # noqa: PLC0415 - only for many inputs

        report = diagnose_in_workers(rules, engine, files, workers, max_unpacked, notes)
    else:
        report = diagnose_inputs(make_diagnoser(rules, engine), files, max_unpacked, notes)
    if report["input"]["bytes"] == 0:
        if report.get("notes"):  # nothing could be read out of it (a damaged gzip, a zip member in LZMA): say why
            raise InputError("; ".join(report["notes"]))
        shown = targets[0] if len(targets) == 1 else f"{len(files)} inputs"
        raise InputError(f"{shown}: the input is empty; nothing to diagnose")
    name = targets[0] if len(targets) == 1 and len(files) == 1 else f"{len(files)} inputs"
    name = "stdin" if name == "-" else name
    if redact:
        redactor = Redactor()
        report = redactor.redact_report(report)
        name = redactor.redact_text(name)
    if not (quiet and worst_severity(report) is None):
        render = {"json": lambda r: to_json(r), "text": lambda r: to_text(r, name),
                  "markdown": lambda r: to_markdown(r, name)}[fmt]
        sys.stdout.write(render(report))
    return _gate([report], fail_on)


def run_rules(output: Path) -> int:
    rules = build_rules(ENTRIES, output)  # with its stamp: kb diagnose then knows these rules are current
    print(f"kb rules: wrote {output} ({len(rules['entries'])} entries, {len(rules['signatures'])} signatures, "
          f"{len(rules['anchors'])} anchors, {rules['hash'][:19]}…)")
    return 0


@dataclass
class CaseResult:
    case: str
    expected: str
    acceptable: list[str]
    got: list[str]
    top1: bool
    top3: bool
    initiating: str | None = None  # what the label says failed first, when it says
    initiating_got: str | None = None
    initiating_ok: bool | None = None
    family: str | None = None  # the family a field-sample case was collected for
    resembled: bool = False  # the report's first answer is a resemblance (nothing matched)


def _initiating(label: str | None, report: dict) -> tuple[str | None, bool | None]:
    """Compare the label's 'rank N' / 'local_rank N' / PCI address / host with the report."""
    found = report.get("initiating") or {}
    shown = ", ".join(f"{k} {found[k]}" for k in ("rank", "host", "pci") if k in found) or "nothing"
    if not label:
        return shown, None
    label = label.strip()
    for prefix in ("rank ", "local_rank "):
        if label.startswith(prefix) and label[len(prefix):].isdigit():
            return shown, found.get("rank") == int(label[len(prefix):])
    if re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}", label):
        return shown, label.lower() == str(found.get("pci", "")).lower()
    if re.fullmatch(r"[\w.\-]+", label):
        return shown, label == found.get("host")
    return shown, None  # free text ('a remote rank, not in this excerpt'): nothing to compare


def named(report: dict) -> tuple[list[str], list[str]]:
    """What a report names, as `kb eval` scores it: the failures (a hang first) and the
    closest-wording leads (a lead is offered as the answer, so it counts as named, and on a
    healthy log as a false alarm), and everything in the report's order (the failures, then
    notes: findings of severity info, such as NCCL falling back to sockets, the answer when a
    job is only slow). Leads exist only where no failure but wrappers was found ("a worker
    failed", "Segmentation fault"): a lead names a possible cause, so it comes before them."""
    failures = [f["id"] for f in report["findings"] if f["role"] != "info"]
    if report["verdict"].startswith("hang: "):
        failures = ["hang", *failures]
    failures = [r["id"] for r in report.get("resembles") or []] + failures
    return failures, failures + [f["id"] for f in report["findings"] if f["role"] == "info"]


def right_first(failures: list[str], got: list[str], acceptable: list[str]) -> bool:
    """How `kb eval` scores one report (``named``'s two lists) against a label's ``acceptable``
    ids: on a healthy log (["none"]) right when it names no failure (a note is no false alarm),
    on a failure log when the first thing it names is acceptable."""
    if acceptable[0] == "none":
        return not failures
    return bool(got) and got[0] in acceptable


def evaluate(folder: Path, diagnoser: Diagnoser, detail: bool = True) -> list[CaseResult]:
    """Diagnose every case of an eval folder against its labels. ``detail=False`` (``kb eval
    --summary``, the field sample's holdout) names no case in the labels' warnings either."""
    import yaml

    labels_path = folder / "labels.yaml"
    if not labels_path.exists():
        raise InputError(f"{folder}: no labels.yaml; an eval folder holds cases/*.log and labels.yaml")
    labels = _read_labels(labels_path, set(diagnoser.rules["entries"]), detail)
    results = []
    for label in labels:
        case = str(label["id"])
        if label.get("files"):  # a whole job: one folder of files per case (tests/fixtures/multi)
            report = diagnose_inputs(diagnoser, _case_inputs(folder / case, label["files"]))
        else:
            log = _case_file(folder / "cases" / f"{case}.log")
            with log.open("rb") as fh:
                report = diagnoser.diagnose(fh)
        failures, got = named(report)
        resembled = [r["id"] for r in report.get("resembles") or []]
        if label.get("culprit") is not None:
            initiating_got, initiating_ok = _culprit(label["culprit"], report)
        else:
            initiating_got, initiating_ok = _initiating(label.get("initiating"), report)
        expected = str(label["expected"])
        acceptable = [expected] + [str(a) for a in (label.get("also_acceptable") or [])]
        top1 = right_first(failures, got, acceptable)
        top3 = top1 if expected == "none" else any(g in acceptable for g in got[:3])
        result = CaseResult(case, expected, acceptable, got, top1, top3)
        wanted = label.get("culprit") if label.get("culprit") is not None else label.get("initiating")
        result.initiating, result.initiating_got, result.initiating_ok = wanted, initiating_got, initiating_ok
        result.family = str(label["family"]) if label.get("family") else None
        result.resembled = bool(resembled) and failures[0] == resembled[0]
        results.append(result)
    return results


def _case_file(path: Path) -> Path:
    """``path``, a log file a case names (cases/<id>.log, or one of its ``files``), or InputError."""
    if not path.exists():
        raise InputError(f"{path}: listed in labels.yaml but missing")
    if not path.is_file():  # a device or a pipe linked as a case would be read forever; a folder not at all
        raise InputError(f"{path}: not a regular file (a device, a pipe or a folder); a case is a log file")
    return path


def _is_name(value: object) -> bool:
    """Whether a label's value can name a case, a file or an entry: text or a whole number (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


# what a label may expect besides an entry id of the rules: a healthy log, a hang, and an Xid code
# the atlas does not describe yet (a report names it xid-<code>, see rank.unknown_meta)
def _names_finding(value: str, entries: set[str]) -> bool:
    return value in entries or value in ("none", "hang") or re.fullmatch(r"xid-[1-9][0-9]{0,5}", value) is not None


def _read_labels(path: Path, entries: set[str] | None = None, detail: bool = True) -> list[dict]:
    """labels.yaml as a list of cases, each with an ``id`` and an ``expected`` id; every problem
    is reported at once, with its line and column, so a hand-edited file is mended in one pass.
    With ``entries`` (the ids of the rules in use), an ``expected`` id that names none of them is
    a problem unless the case says ``new: true`` (a failure class the atlas lacks yet); an
    ``also_acceptable`` id that names none of them, nor such a new class, is a warning (it can
    never match; the shared development logs keep a few)."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        _refuse_aliases(root, path)  # before constructing: 1 KB of nested aliases stands for a billion values
        labels = yaml.safe_load(text)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; labels.yaml is a YAML list of cases") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        reason = getattr(exc, "problem", None) or "not valid YAML"
        raise InputError(f"{where}: {reason}\n    hint: fix the YAML syntax there; quote values that contain ': '") from None
    if not isinstance(labels, list) or not isinstance(root, yaml.SequenceNode):
        raise InputError(f"{path}: expected a list of cases (- id: ..., expected: ...)")
    problems: list[str] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    new = {str(label["expected"]) for label in labels
           if isinstance(label, dict) and label.get("new") is True and _is_name(label.get("expected"))}
    for label, node in zip(labels, root.value):
        where = _at(path, node)
        if not isinstance(label, dict):
            problems.append(f"{where}: a case is a mapping with `id` and `expected`, not {type(label).__name__}")
            continue
        values = _values(node, path, problems)
        for key in ("id", "expected"):
            if label.get(key) in (None, ""):
                problems.append(f"{where}: case without `{key}`")
            elif not _is_name(label[key]):
                problems.append(f"{where}: `{key}` must be a name, not a {type(label[key]).__name__}")
        # a case names a log inside the folder: no path out of it (a shared eval set must not read ~/.ssh)
        outside = [str(v) for v in [label.get("id"), *(label.get("files") or [])]
                   if isinstance(v, (str, int)) and not _inside(str(v))]
        if outside:
            problems.append(f"{where}: {outside[0]!r} leads outside the eval folder; ids and files are plain "
                            "names or relative paths without '..'")
        if label.get("id") not in (None, ""):
            case = str(label["id"])
            if case in seen:
                problems.append(f"{where}: case {case} is listed twice (first on line {seen[case]})")
            seen.setdefault(case, node.start_mark.line + 1)
        for key in ("also_acceptable", "files"):
            if label.get(key) is not None and not isinstance(label[key], list):
                problems.append(f"{where}: `{key}` must be a list")
            elif label.get(key) is not None:
                what = "a file name in the case's folder" if key == "files" else "an entry id"
                problems.extend(f"{_at(path, item_node)}: each item of `{key}` must be {what}, not "
                                f"{_kind(item)}" for item, item_node in zip(label[key], values[key].value)
                                if not _is_name(item))
        problems.extend(_typed(label, values, path))
        if entries is not None and _is_name(label.get("id")):
            case = str(label["id"])
            expected = label.get("expected")
            if _is_name(expected) and not _names_finding(str(expected), entries) and label.get("new") is not True:
                problems.append(f"{_at(path, values['expected'])}: case {case}: `expected` {str(expected)!r} is no entry "
                                "id of the rules in use; name an entry (its file name without .yaml), none for a "
                                "healthy log or hang, or add `new: true` for a failure class the atlas lacks yet")
            if isinstance(label.get("also_acceptable"), list):
                warnings.extend(f"{_at(path, item_node)}: case {case}: `also_acceptable` {str(item)!r} is no entry id "
                                "of the rules in use, nor a new one (`new: true`) in this file; it can never match"
                                for item, item_node in zip(label["also_acceptable"], values["also_acceptable"].value)
                                if _is_name(item) and not _names_finding(str(item), entries) and str(item) not in new)
    if problems:
        raise InputError("\n".join([*problems, f"{path}: {len(problems)} problem(s); each case needs an `id` "
                                     "(its log is cases/<id>.log) and the `expected` entry id, or none for a healthy log"]))
    if warnings and not detail:  # a part nobody studies case by case: counted, not named
        warnings = [f"{path}: {len(warnings)} `also_acceptable` id(s) name no entry of the rules in use, nor a new "
                    "one (`new: true`) in this file; they can never match (listed without --summary)"]
    for warning in warnings:
        sys.stderr.write(visible(f"kb eval: warning: {warning}") + "\n")
    return labels


def _kind(value: object) -> str:
    """What YAML made of a value, in its own words: null, a mapping, a list, a boolean, a number, text."""
    if value is None:
        return "null"
    kinds = ((bool, "a boolean"), (dict, "a mapping"), (list, "a list"), (str, "text"), ((int, float), "a number"))
    return next((word for kind, word in kinds if isinstance(value, kind)), type(value).__name__)


def _at(path: Path, node) -> str:  # noqa: ANN001 - a composed yaml node
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _values(node, path: Path, problems: list[str]) -> dict:  # noqa: ANN001 - a composed yaml mapping node
    """A case's value nodes by key (the last of a key given twice, as YAML keeps it); a key given
    twice is a problem: YAML would keep the second value silently (expected: xid-79, expected: none)."""
    import yaml

    values: dict = {}
    stack = [node]
    while stack:  # the case's own keys, then those of a mapping inside it (culprit)
        mapping = stack.pop()
        first: dict = {}
        for key_node, value_node in mapping.value:
            key = key_node.value
            if key in first:
                problems.append(f"{_at(path, key_node)}: `{key}` is given twice in this case (first on line "
                                f"{first[key].start_mark.line + 1}, column {first[key].start_mark.column + 1}); "
                                "YAML keeps only the last one, silently: remove one")
            first.setdefault(key, key_node)
            if mapping is node:
                values[key] = value_node
            if isinstance(value_node, yaml.MappingNode):
                stack.append(value_node)
    return values


def _typed(label: dict, values: dict, path: Path) -> list[str]:
    """The problems of a case's optional fields that `kb eval` reads: culprit, initiating, family."""
    problems = []
    culprit = label.get("culprit")
    if culprit is not None:
        where = _at(path, values["culprit"])
        if not isinstance(culprit, dict):
            problems.append(f"{where}: `culprit` must be a mapping (node: <host name>, rank: <rank or list of "
                            f"ranks>), not {_kind(culprit)}")
        else:
            inner = {key.value: value for key, value in values["culprit"].value}
            node, rank = culprit.get("node"), culprit.get("rank")
            if node is not None and not _is_name(node):
                problems.append(f"{_at(path, inner['node'])}: `culprit`'s node must be a host name, not {_kind(node)}")
            ranks = rank if isinstance(rank, list) else [rank]
            if rank is not None and not all(isinstance(r, int) and not isinstance(r, bool) for r in ranks):
                problems.append(f"{_at(path, inner['rank'])}: `culprit`'s rank must be a rank number or a list of "
                                "rank numbers")
    for key in ("initiating", "family"):
        if label.get(key) is not None and not isinstance(label[key], str):
            problems.append(f"{_at(path, values[key])}: `{key}` must be text, not {_kind(label[key])}")
    return problems


def _inside(name: str) -> bool:
    """Whether ``name`` is a relative path that stays inside the folder it is joined to."""
    parts = name.replace("\\", "/").split("/")
    return bool(name) and not name.startswith(("/", "~")) and ".." not in parts and ":" not in parts[0]


def _refuse_aliases(root, path: Path) -> None:  # noqa: ANN001 - a composed yaml node (or None)
    """InputError at the first value used twice through an anchor and an alias, or nested too deeply."""
    stack, seen = ([(root, 0)] if root is not None else []), set()
    while stack:
        node, depth = stack.pop()
        where = f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"
        if id(node) in seen:
            raise InputError(f"{where}: a value used again through an alias (*name); write it out in full\n"
                             "    hint: labels.yaml needs no anchors (&) or aliases (*)")
        if depth > 32:
            raise InputError(f"{where}: values nested more than 32 levels deep; a case is a flat mapping")
        seen.add(id(node))
        if isinstance(node.value, list):
            stack.extend((child, depth + 1) for item in node.value
                         for child in (item if isinstance(item, tuple) else (item,)))


def _case_inputs(case_dir: Path, files: list[str]) -> list[str]:
    """A job case's inputs: its per-source files; the log as posted (original.*) only when nothing else is there."""
    names = [str(f) for f in files]
    split = [f for f in names if not f.startswith("original")]
    chosen = split or names
    missing = [f for f in chosen if not (case_dir / f).exists()]
    if missing:
        raise InputError(f"{case_dir}: listed in labels.yaml but missing: {', '.join(missing)}")
    return [str(_case_file(case_dir / f)) for f in chosen]


def _tokens(text: object) -> set[str]:
    return {t for t in re.split(r"[^A-Za-z0-9.]+", str(text).lower()) if t} | {t for t in re.split(r"[^A-Za-z0-9]+", str(text).lower()) if t}


def _culprit(label: dict, report: dict) -> tuple[str, bool | None]:
    """Compare a job case's culprit (node and/or rank) with what the report says failed first."""
    found = report.get("initiating") or {}
    shown = ", ".join(f"{k} {found[k]}" for k in ("host", "rank", "pid") if k in found) or "nothing"
    checks = []
    node = label.get("node")
    if node not in (None, ""):
        host = found.get("host")
        checks.append(bool(host) and (str(node).lower() == str(host).lower() or str(node).lower() in _tokens(host)))
    rank = label.get("rank")
    if rank is not None:
        wanted = rank if isinstance(rank, list) else [rank]
        checks.append(found.get("rank") in wanted)
    if not checks:
        return shown, None  # the thread does not say who: nothing to compare
    return shown, all(checks)


def family_scores(results: list[CaseResult]) -> list[tuple[str, int, int, int, int, int]]:
    """Per family: (family, failure cases, top-1, top-3, healthy cases, false positives)."""
    rows = []
    for family in sorted({r.family for r in results if r.family}):
        mine = [r for r in results if r.family == family]
        failing = [r for r in mine if r.expected != "none"]
        healthy = [r for r in mine if r.expected == "none"]
        rows.append((family, len(failing), sum(r.top1 for r in failing), sum(r.top3 for r in failing), len(healthy),
                     sum(1 for r in healthy if not r.top1)))
    return rows


def lead_counts(results: list[CaseResult]) -> tuple[int, int, int, int]:
    """Of the cases whose first answer was a closest-wording lead: how many, right first, wrong,
    and on healthy logs (false alarms)."""
    led = [r for r in results if r.resembled]
    right = sum(1 for r in led if r.expected != "none" and r.top1)
    alarms = sum(1 for r in led if r.expected == "none")
    return len(led), right, len(led) - right - alarms, alarms


def run_eval(folder: Path, rules_path: Path | None, engine: str, min_top1: float | None, summary: bool = False) -> int:
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder")
    diagnoser = make_diagnoser(ensure_rules(rules_path), engine)
    results = evaluate(folder, diagnoser, detail=not summary)
    n = len(results)
    top3 = sum(r.top3 for r in results)
    nones = [r for r in results if r.expected == "none"]
    failing = [r for r in results if r.expected != "none"]
    false_pos = sum(1 for r in nones if not r.top1)
    print(f"kb eval: {folder} ({n} cases: {len(failing)} failure logs, {len(nones)} healthy)")
    if not n:
        print("  no cases")
    fail_top1 = sum(r.top1 for r in failing)
    for k, hits in (("top-1", fail_top1), ("top-3", sum(r.top3 for r in failing))):
        if failing:  # scored on failure logs only: a healthy log is right when nothing is found, counted below
            print(f"  {k}: {hits}/{len(failing)} failure logs ({100 * hits / len(failing):.0f} %)")
    print(f"  false positives on healthy logs: {false_pos}/{len(nones)}" if nones else "  no healthy (none) cases")
    leads, right, wrong, alarms = lead_counts(results)
    if leads:
        print(f"  answered by closest wording (no signature matched): {leads} logs, {right} right first, "
              f"{wrong} wrong, {alarms} healthy")
    for family, n_fail, f1, f3, n_ok, fp in family_scores(results):
        healthy = f", false positives {fp}/{n_ok}" if n_ok else ""
        print(f"  {family}: top-1 {f1}/{n_fail}, top-3 {f3}/{n_fail}{healthy}")
    if summary:
        return 0 if top3 == n else 1
    labelled = [r for r in results if r.initiating_ok is not None]
    if labelled:
        print(f"  failed first (rank, host or GPU) named right: {sum(r.initiating_ok for r in labelled)}/{len(labelled)}")
    for r in labelled:
        if not r.initiating_ok:
            print(f"  initiating {r.case}: label says {r.initiating}, report says {r.initiating_got}")
    misses = [r for r in results if not r.top1]
    for r in misses:
        shown = ", ".join(r.got[:3]) or "nothing"
        print(f"  miss {r.case}: expected {r.expected}, got {shown}{' (in top 3)' if r.top3 else ''}")
    if not misses:
        print("  every case right at the top")
    if min_top1 is not None and failing and fail_top1 / len(failing) < min_top1:
        return 1
    return 0 if top3 == n else 1
