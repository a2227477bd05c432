"""The ``kb`` command line: validate the corpus, generate pages and the schema.

Every command prints problems as ``path:line:col: CODE message`` with a hint, and exits
0 on success, 1 when the corpus or the input has problems, 2 on a usage or input error.
No command shows a Python traceback for bad input.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_at_start(signum, frame) -> None:  # noqa: ANN001 - a signal handler
    """Ctrl-C while the command starts (imports, parsing): one line and exit 130, no traceback.
    ``main`` puts Python's own handler back once it can catch the KeyboardInterrupt itself."""
    os.write(2, b"kb: interrupted\n")
    os._exit(130)


# only in a `kb` process: a program that imports the module (the tests) keeps its own Ctrl-C
_CLI_PROCESS = os.path.basename(sys.argv[0]) in ("kb", "__main__.py") and "pytest" not in sys.modules
if _CLI_PROCESS:
    signal.signal(signal.SIGINT, _interrupted_at_start)

import argparse  # noqa: E402 - after the handler: Ctrl-C during the imports is handled too
import json  # noqa: E402
import math  # noqa: E402
from pathlib import Path  # noqa: E402

from generator import __version__  # noqa: E402
from generator.errors import CorpusError, InputError, KbError, Problem, display_path, plural  # noqa: E402
from generator.corpus.categories import CATEGORIES  # noqa: E402

REPO_ROOT = Path.cwd()
SCHEMA_PATH = Path("kb/schema/entry.schema.json")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line and a pointer to --help."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")


MAX_PRINTED_PER_FILE = 100  # problems printed per file; the rest are counted (a file of 50,000 duplicate keys)


def _print_problems(problems: list[Problem]) -> None:
    from generator.matcher.report import visible

    github = os.environ.get("GITHUB_ACTIONS") == "true"
    shown: dict[str, int] = {}
    for p in problems:
        shown[p.path] = shown.get(p.path, 0) + 1
        if shown[p.path] <= MAX_PRINTED_PER_FILE:
            print(p.github_annotation() if github else p.format())
    for path, count in shown.items():
        if count > MAX_PRINTED_PER_FILE:
            print(visible(f"{path}: {count - MAX_PRINTED_PER_FILE:,} more problems in this file not shown"))
            print(f"    hint: fix the {MAX_PRINTED_PER_FILE} listed above and run kb validate again")


def cmd_validate(args: argparse.Namespace) -> int:
    from generator.corpus.validated import load_corpus

    root = Path(args.root)
    try:
        corpus = load_corpus(root)
    except CorpusError as exc:
        _print_problems(exc.problems)
        print(f"kb validate: {exc} ({plural(exc.checked, 'file')} checked)", file=sys.stderr)
        return 1
    sigs = sum(len(e.signatures) for e in corpus.entries)
    print(f"kb validate: {plural(len(corpus.entries), 'entry')} OK, {plural(sigs, 'signature')} ({args.root})")
    return 0


def schema_text() -> str:
    from generator.corpus.model import entry_json_schema

    return json.dumps(entry_json_schema(), indent=2, ensure_ascii=False) + "\n"


def _output_file(target: Path, what: str) -> None:
    """Refuse an --output that is no file to replace: a folder, a device (/dev/full), a FIFO."""
    import stat

    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        if not target.parent.is_dir():
            raise InputError(f"{display_path(target.parent)}: no such folder; create it first, or pass another "
                             f"--output for {what}") from None
        return
    except OSError as exc:
        raise InputError(f"{display_path(target)}: cannot use it: {exc.strerror or exc}; pass another --output") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{display_path(target)}: is a folder; pass the path of the file to write, e.g. "
                         f"{display_path(target / 'entry.schema.json')}")
    if not stat.S_ISREG(mode):
        raise InputError(f"{display_path(target)}: is not a regular file (a device, FIFO or socket); pass the path of "
                         f"a file for {what}")


def cmd_schema(args: argparse.Namespace) -> int:
    from generator import atomic

    target = Path(args.output)
    text = schema_text()
    _output_file(target, "the schema")
    if args.check:
        try:
            current = target.read_bytes() if target.exists() and target.stat().st_size == len(text.encode()) else b""
        except OSError as exc:
            raise InputError(f"{display_path(target)}: cannot read it: {exc.strerror or exc}; check its permissions") from None
        if current != text.encode("utf-8"):
            print(f"{target}: out of date with generator/corpus/model.py; run 'kb schema' and commit the result", file=sys.stderr)
            return 1
        print(f"kb schema: {target} is current")
        return 0
    try:
        atomic.replace_text(target, text)
    except OSError as exc:
        raise InputError(f"{display_path(target)}: cannot write it: {exc.strerror or exc}; check that the file and its "
                         "folder are writable and that the disk has room") from None
    print(f"kb schema: wrote {target}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from generator.corpus.validated import load_corpus
    from generator.site.render import pages, write_pages

    try:
        corpus = load_corpus(Path(args.root))
    except CorpusError as exc:
        _print_problems(exc.problems)
        print(f"kb build: {exc}; nothing was written", file=sys.stderr)
        return 1
    from generator.site.build_lock import BuildLock

    lock = BuildLock(REPO_ROOT)
    lock.hold()
    try:
        stats = write_pages(pages(corpus, REPO_ROOT), Path(args.docs))
    finally:
        lock.release()
    print(f"kb build: {plural(len(corpus.entries), 'entry')}; {plural(stats.written, 'page')} written, "
          f"{stats.unchanged} unchanged, {stats.removed} removed ({args.docs})")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from generator.cli.diagnose import run_rules

    return run_rules(Path(args.output))


MAX_SIZE = 1 << 50  # --max-unpacked: 1024T, far past any log, still a bound
MAX_JOBS = 256  # --jobs: each worker holds the compiled rules; thousands would exhaust memory


def _size(text: str) -> int:
    """A size such as 512M, 16G or 2T (bytes without a suffix), from 1 byte to ``MAX_SIZE``."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in units else ""
    try:
        number = float(value[: len(value) - len(unit)] if unit else value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; write it like 512M, 16G or 2T")
    if not 1 <= number * units[unit] <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: a size is from 1 (byte) to 1024T")
    return int(number * units[unit])


def _jobs(text: str) -> int:
    """A number of worker processes: a whole number from 1 to ``MAX_JOBS``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give the worker processes as 1 to "
                                         f"{MAX_JOBS}") from None
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: worker processes are 1 to {MAX_JOBS}")
    return value


def _path(what: str, file: bool = False):  # noqa: ANN202 - an argparse type
    """An argparse type for a path argument: any text but the empty one, which ``Path`` would read
    as '.' (an unset variable, ``kb diagnose "$LOG"``, would walk the whole working folder).
    ``file``: the path of a file to write, which a trailing '/' (a folder) cannot be: ``Path``
    drops the slash, and ``--output out.json/`` wrote the file out.json."""

    def path(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError(f"an empty path was given; pass {what}")
        if file and text.endswith(("/", os.sep)):
            raise argparse.ArgumentTypeError(f"{text!r} ends in '/', which names a folder; pass {what}")
        return text

    return path


def _rate(text: str) -> float:
    """A rate: a number from 0 to 1 (nan and the infinities are none)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:  # False for nan too
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate; give a number from 0 to 1, e.g. 0.8")
    return value


def cmd_diagnose(args: argparse.Namespace) -> int:
    from generator.cli.diagnose import run_diagnose

    return run_diagnose(args.log, args.format, Path(args.rules) if args.rules else None, args.engine,
                        max_unpacked=args.max_unpacked, jobs=args.jobs, fail_on=args.fail_on, quiet=args.quiet,
                        redact=args.redact)


def cmd_eval(args: argparse.Namespace) -> int:
    from generator.cli.diagnose import run_eval

    return run_eval(Path(args.folder), Path(args.rules) if args.rules else None, args.engine, args.min_top1,
                    summary=args.summary)


def cmd_new(args: argparse.Namespace) -> int:
    from generator.cli.scaffold import new_entry

    path = new_entry(args.id, args.category, Path(args.root))
    print(f"kb new: wrote {path}; fill in every TODO: value, then run 'kb validate' and 'make serve'")
    return 0


def cmd_fmt(args: argparse.Namespace) -> int:
    from generator.corpus.fmt import format_file
    from generator.corpus.load import entry_files

    paths: list[Path] = []
    for target in args.paths or ["kb/entries"]:
        paths.extend(entry_files(Path(target)))
    results = [format_file(p, check=args.check) for p in paths]
    errors = [r for r in results if r.error]
    changed = [r for r in results if r.changed]
    from generator.matcher.report import visible  # a file name may hold ESC or a line break: shown, not sent

    for r in errors:
        where = f"{r.path}:{r.line}" if r.line else f"{r.path}"
        print(visible(f"{where}: {r.error}"), file=sys.stderr)
    for r in changed:
        print(visible(f"{r.path}") + (": not in canonical layout" if args.check else ": reformatted"))
    verb = "would reformat" if args.check else "reformatted"
    print(f"kb fmt: {verb} {plural(len(changed), 'file')}, {len(results) - len(changed) - len(errors)} already "
          f"canonical, {len(errors)} not formatted", file=sys.stderr)
    return 1 if errors or (args.check and changed) else 0


def cmd_docs(args: argparse.Namespace) -> int:
    from generator.corpus.fieldref import update

    guide = Path(args.guide)
    try:
        current = update(guide, check=args.check)
    except (OSError, ValueError) as exc:
        raise KbError(str(exc)) from None
    if args.check and not current:
        print(f"{guide}: the field reference is out of date with generator/corpus/model.py; run 'kb docs'", file=sys.stderr)
        return 1
    print(f"kb docs: {guide} " + ("is current" if current else "updated"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kb",
        description="GPU Failure Atlas: validate the corpus, generate the site's pages, diagnose logs.",
        epilog="Example: kb validate kb/entries",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and the corpus it diagnoses with, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("validate", help="check every entry and report all problems",
                       description="Load every entry under ROOT, check it, and print each problem as "
                                   "path:line:col: CODE message with a hint. Exit 1 if there is any problem.",
                       epilog="Example: kb validate kb/entries")
    p.add_argument("root", nargs="?", default="kb/entries", type=_path("the folder of entry files"),
                   help="folder of entry files (default: kb/entries)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="write the JSON Schema of an entry (for editors)",
                       description="Generate kb/schema/entry.schema.json from the entry model.",
                       epilog="Example: kb schema --check")
    p.add_argument("--output", default=str(SCHEMA_PATH), type=_path("the file to write the schema to", file=True),
                   help=f"where to write it (default: {SCHEMA_PATH})")
    p.add_argument("--check", action="store_true", help="exit 1 if the file is out of date instead of writing it")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("build", help="generate the site's Markdown pages from the corpus",
                       description="Validate the corpus and render entry, category, Xid and home pages into DOCS. "
                                   "mkdocs build runs this itself through the project's hook.",
                       epilog="Example: kb build && mkdocs build --strict")
    p.add_argument("root", nargs="?", default="kb/entries", type=_path("the folder of entry files"),
                   help="folder of entry files (default: kb/entries)")
    p.add_argument("--docs", default="docs", type=_path("the MkDocs docs folder"),
                   help="the MkDocs docs folder (default: docs)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("new", help="write a commented template for a new entry",
                       description="Create kb/entries/CATEGORY/ID.yaml from a commented template. Refuses an id that "
                                   "exists already, an invalid id and an unknown category.",
                       epilog="Example: kb new cuda-launch-timeout --category cuda")
    p.add_argument("id", help="the new entry's id (lower-case words joined by hyphens; xid-<code> for Xids)")
    p.add_argument("--category", required=True, help="one of: " + ", ".join(CATEGORIES))
    p.add_argument("--root", default="kb/entries", type=_path("the folder of entry files"),
                   help="folder of entry files (default: kb/entries)")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("fmt", help="rewrite entries into the canonical layout (keeps comments)",
                       description="Put keys in the model's order, prose in literal blocks and lists of ids in flow "
                                   "style, keeping comments and content. --check lists the files that differ and "
                                   "exits 1 without writing.",
                       epilog="Example: kb fmt --check")
    p.add_argument("paths", nargs="*", type=_path("an entry file or a folder of them"),
                   help="files or folders (default: kb/entries)")
    p.add_argument("--check", action="store_true", help="only report files not in canonical layout")
    p.set_defaults(func=cmd_fmt)

    p = sub.add_parser("docs", help="regenerate the field reference in the contributor guide",
                       description="Rewrite the field reference block of docs/contributing.md from the entry model; "
                                   "--check exits 1 when it is out of date.",
                       epilog="Example: kb docs --check")
    p.add_argument("--guide", default="docs/contributing.md", type=_path("the Markdown guide to update"),
                   help="the guide to update (default: docs/contributing.md)")
    p.add_argument("--check", action="store_true", help="exit 1 if the block is stale instead of writing it")
    p.set_defaults(func=cmd_docs)

    p = sub.add_parser("rules", help="compile the corpus into rules.json for the log matcher",
                       description="Write the rules file the matcher reads: patterns, prefilter literals, "
                                   "entry summaries and cascade edges, with a format version and a content hash.",
                       epilog="Example: kb rules --output build/rules.json")
    p.add_argument("--output", default="build/rules.json", type=_path("the file to write the rules to", file=True),
                   help="where to write it (default: build/rules.json)")
    p.set_defaults(func=cmd_rules)

    engines = ("auto", "python", "re2", "hyperscan")
    p = sub.add_parser("diagnose", help="name the root cause in a log, then the collateral",
                       description="Read a log (any size, any bytes) and report which failures it shows, the "
                                   "root cause first, with where it happened, evidence lines and first steps. "
                                   "Nothing leaves this machine.",
                       epilog="Example: kb diagnose job.log --format markdown;  dmesg -T | kb diagnose -;  "
                              "kb diagnose node*/ slurm-1234-*.out logs.tar.gz  (a whole job: one report)")
    p.add_argument("log", nargs="+", type=_path("a log file, a folder or -"),
                   help="log files, folders (read recursively), .gz/.zip/.tar(.gz) archives, or - for standard input")
    p.add_argument("--format", choices=("text", "json", "markdown", "jsonl"), default="text",
                   help="text for people (default), json (schema kb.diagnosis/2), markdown for chats and PRs, "
                        "jsonl: one compact JSON report per input file, one per line, for pipelines")
    p.add_argument("--fail-on", choices=("info", "low", "medium", "high", "critical"), default=None, metavar="SEVERITY",
                   help="exit 1 when a failure of this severity or worse is found (info, low, medium, high, "
                        "critical; a hang counts as high): a gate for CI and cron")
    p.add_argument("--quiet", action="store_true", help="print nothing when nothing is found")
    p.add_argument("--redact", action="store_true",
                   help="replace host names, IP and MAC addresses, user names in paths, e-mails and secrets with "
                        "stable placeholders in the report, so it can be pasted into a public issue")
    p.add_argument("--max-unpacked", type=_size, default=None, metavar="SIZE",
                   help="most bytes read out of one input, once unpacked if it is compressed or an archive (default 16G; e.g. 64G; 1 to 1024T): a bound on decompression bombs and endless streams")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help=f"worker processes for many inputs, 1 to {MAX_JOBS} (default: one per core, at most the "
                        "number of inputs)")
    p.add_argument("--rules", type=_path("a rules.json, or leave --rules out for the default"),
                   help="rules.json to use (default: build/rules.json, rebuilt from kb/entries when stale)")
    p.add_argument("--engine", choices=engines, default="auto",
                   help="prefilter engine: hyperscan (needs the hyperscan package), re2 (needs google-re2), python, "
                        "or auto (Hyperscan, else RE2, else python); Hyperscan keeps its compiled patterns in "
                        "$KB_CACHE_DIR (default ~/.cache/gpu-failure-atlas)")
    p.set_defaults(func=cmd_diagnose)

    p = sub.add_parser("eval", help="score the diagnosis on a folder of labelled logs",
                       description="Run the diagnosis on FOLDER/cases/*.log and compare with FOLDER/labels.yaml: "
                                   "prints top-1, top-3, false positives on healthy logs and every miss. Exit 1 "
                                   "unless every case is right within the top 3.",
                       epilog="Example: kb eval tests/fixtures/logs")
    p.add_argument("folder", type=_path("a folder with cases/*.log and labels.yaml"),
                   help="folder with cases/*.log and labels.yaml")
    p.add_argument("--rules", type=_path("a rules.json, or leave --rules out for the default"),
                   help="rules.json to use (default: build/rules.json)")
    p.add_argument("--engine", choices=engines, default="auto", help="prefilter engine (see kb diagnose)")
    p.add_argument("--min-top1", type=_rate, default=None, metavar="RATE",
                   help="also exit 1 if the top-1 rate on failure logs is below this (0 to 1, e.g. 0.8)")
    p.add_argument("--summary", action="store_true",
                   help="print the scores (per family when the labels name one) but no case-by-case misses: "
                        "for a held-out sample whose misses nobody should read")
    p.set_defaults(func=cmd_eval)
    return parser


class _Version(argparse.Action):
    """`kb --version`: the package version and the corpus hash of the rules `kb diagnose` would use."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        from generator.cli.diagnose import ensure_rules  # noqa: PLC0415

        try:
            rules = ensure_rules(None)
            corpus = f"corpus {rules['hash'][:19]}, {len(rules['entries'])} entries, {len(rules['signatures'])} signatures"
        except KbError as exc:
            corpus = f"no corpus ({exc})"
        print(f"kb {__version__} ({corpus})")
        parser.exit(0)


# commands that read or write the YAML corpus: they need a checkout of the repository
AUTHORING = ("validate", "schema", "build", "new", "fmt", "docs", "rules")


def _has_corpus(args: argparse.Namespace) -> bool:
    """Whether an authoring command may run: it was given a folder or files of its own (which it
    checks itself), or kb/entries is here."""
    if getattr(args, "paths", None) or getattr(args, "root", "kb/entries") not in (None, "kb/entries"):
        return True
    return Path("kb/entries").is_dir()


class OutputError(KbError):
    """Standard output cannot be written (a full disk, /dev/full, an I/O error)."""


class _Output:
    """Standard output as the commands write it: a write error other than a closed pipe becomes
    ``OutputError`` (one line, exit 2, whatever the command), not an OSError traceback and not
    exit 1 (which `kb diagnose --fail-on` uses for "a failure was found")."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - a text stream
        self._stream = stream

    def _guard(self, call, *args):  # noqa: ANN001, ANN202
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def writelines(self, lines) -> None:  # noqa: ANN001
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str):  # noqa: ANN204 - encoding, isatty, fileno, buffer...
        return getattr(self._stream, name)


def _tolerant(stream) -> None:  # noqa: ANN001
    """Text the terminal's encoding cannot show (PYTHONIOENCODING=ascii, a cp1252 console) is
    written as an escape (\\xd7, \\ufffd), never a UnicodeEncodeError."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and str(getattr(stream, "errors", "")) == "strict":
        try:
            reconfigure(errors="backslashreplace")
        except (OSError, ValueError):  # a closed or detached stream: nothing will be written to it anyway
            pass


def _discard_pending_output(stream) -> None:  # noqa: ANN001
    """After a write error on standard output, make Python's flush at exit succeed silently
    (the unwritten text would otherwise end in 'Exception ignored' and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def _say(line: str) -> None:
    from generator.matcher.report import visible  # names from a folder or an archive may hold ESC: shown, not sent

    try:
        print("\n".join(visible(part) for part in line.split("\n")), file=sys.stderr)
    except OSError:
        pass  # standard error is unwritable too: the exit code still says it


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every way out is an exit code and, on error, one line on standard error:
    0 done, 1 problems found, 2 an input, an argument or the output unusable, 130 interrupted."""
    if signal.getsignal(signal.SIGINT) is _interrupted_at_start:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on main catches Ctrl-C itself
    _tolerant(sys.stdout)
    _tolerant(sys.stderr)
    stdout = sys.stdout
    sys.stdout = _Output(stdout)
    command = "kb"
    try:
        try:
            code = _run(argv)
        except SystemExit as exc:  # argparse's --help, --version and usage errors: their output is flushed too
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except OutputError as exc:
        _discard_pending_output(stdout)
        _say(f"kb: {exc}")
        return 2
    except KeyboardInterrupt:
        _say("kb: interrupted")
        return 130
    except BrokenPipeError:
        _discard_pending_output(stdout)
        sys.stderr.close()
        return 0
    finally:
        sys.stdout = stdout
        if _CLI_PROCESS:  # the work is done: a Ctrl-C while Python shuts down must not turn it into -2
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command in AUTHORING and not _has_corpus(args):
        print(f"kb {args.command}: works in a checkout of the atlas (no kb/entries here); clone the repository and run "
              "it there. An installed kb can diagnose (kb diagnose) and evaluate (kb eval) from anywhere.", file=sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except OutputError:
        raise
    except CorpusError as exc:
        _print_problems(exc.problems)
        print(f"kb {args.command}: the corpus has {exc}; run 'kb validate'", file=sys.stderr)
        return 1
    except KbError as exc:
        _say(f"kb {args.command}: {exc}")
        return 2
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except OSError as exc:  # a file the command was pointed at, not handled where it was read or written
        where = f"{display_path(Path(os.fsdecode(exc.filename)))}: " if exc.filename is not None else ""
        _say(f"kb {args.command}: {where}{exc.strerror or exc}; check that the path names a file (not a folder) that "
             "you may read, or write where the command writes")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
