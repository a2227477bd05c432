"""The log matcher: standard library only, so the same code runs in CPython and in Pyodide.

It reads nothing but a rules document (rules.json, written by ``kb rules``) and a log.

    from generator.matcher import Diagnoser, load_rules
    report = Diagnoser(load_rules("build/rules.json")).diagnose(open("job.log", "rb"))

Modules: ``read`` (bytes in, clean line-aligned chunks out), ``scan`` (literal prefilter),
``parse`` (timestamps, ranks, hosts, Xid/SXid lines), ``match`` (hits), ``rank`` (root
cause before collateral), ``report`` (JSON, text, Markdown), ``rules`` (load and check the
rules file), ``regular`` (read a file that must be a regular one, bounded and without
blocking; the corpus reads entry files with it too), ``engine`` (ties them together),
``errors`` (the package's exception root).
"""

from .engine import Diagnoser
from .errors import InputError, KbError, RulesError
from .report import SCHEMA, to_json, to_markdown, to_text
from .rules import check as check_rules
from .rules import load as load_rules

__all__ = ["Diagnoser", "InputError", "KbError", "RulesError", "SCHEMA", "check_rules", "load_rules", "to_json",
           "to_markdown", "to_text"]
