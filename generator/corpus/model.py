"""The entry model: one failure class per YAML file, validated by pydantic v2.

This module is the real definition of an entry; ``kb/schema/entry.schema.json`` is generated
from it (``kb schema``) and the contributor guide documents every field it declares. Unknown
fields are forbidden everywhere so that a typo is an error, not a silently ignored key.

Field descriptions below are written for contributors: they show up in editors through the
JSON Schema and in the field reference of the contributor guide.
"""

from __future__ import annotations

import re

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from generator.corpus.categories import CATEGORIES, CATEGORY_TITLES
from generator.corpus.safety import URL_CHARS, URL_OUTSIDE

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ID_MAX_LENGTH = 80

Category = Literal[CATEGORIES]  # the tuple in generator/corpus/categories.py, one Literal value each
assert set(CATEGORY_TITLES) == set(CATEGORIES)

Severity = Literal["info", "low", "medium", "high", "critical"]
SEVERITIES: tuple[str, ...] = Severity.__args__  # type: ignore[attr-defined]

Owner = Literal["application", "framework", "driver", "firmware", "hardware", "network", "platform"]

Rung = Literal[
    "fix-code",
    "configure",
    "restart-app",
    "reset-gpu",
    "reboot-node",
    "drain-node",
    "replace-hardware",
    "escalate",
    "verify",
]

LegacyCause = Literal[
    "hardware",
    "driver",
    "application",
    "system-memory",
    "bus",
    "thermal",
    "fb-corruption",
]

Origin = Literal[
    "application",
    "driver",
    "firmware",
    "hardware",
    "memory",
    "pcie",
    "nvlink",
    "thermal",
    "power",
    "fabric",
    "virtualization",
]

GpuProduct = Literal["A100", "H100", "B100", "GB200", "pre-Ampere"]


# Line breaks, other control characters (an ESC starts a terminal sequence) and the bidirectional
# overrides that make text display in another order than it reads (U+202E): none belongs in a line
# of text, and a line break in a title would start a paragraph of its own on the page.
_NOT_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _no_surrounding_space(value: str) -> str:
    if value != value.strip():
        raise ValueError("must not start or end with white space")
    bad = _NOT_IN_A_LINE.search(value)
    if bad:
        raise ValueError(f"must be one line of plain text; it holds the character U+{ord(bad.group()):04X} at "
                         f"character {bad.start() + 1} (a line break, a control character or a direction override)")
    return value


TEXT_MAX_LENGTH = 500  # the corpus's longest one-line text (a title) is 261 characters
Text = Annotated[str, StringConstraints(min_length=1, max_length=TEXT_MAX_LENGTH), AfterValidator(_no_surrounding_space)]
"""A short, non-empty line of plain text."""

Markdown = Annotated[str, StringConstraints(min_length=1)]
"""Markdown prose written by contributors; raw HTML is refused by validation."""

EntryId = Annotated[str, StringConstraints(pattern=ID_PATTERN, max_length=ID_MAX_LENGTH)]

def _check_url(value: str) -> str:
    bad = URL_OUTSIDE.search(value)  # a character that could end a link or an attribute
    if bad:
        ch = bad.group(0)
        shown = repr(ch) if ch.isprintable() and not ch.isspace() else f"U+{ord(ch):04X}"
        raise ValueError(f"a URL may not contain {shown} (it could end a link or an attribute); "
                         f"write it percent-encoded as %{ord(ch):02X}" if ord(ch) < 128 else
                         f"a URL may not contain {shown}; percent-encode it")
    parts = urlsplit(value)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or "." not in host or host.startswith(".") or host.endswith("."):
        raise ValueError("not a well-formed absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise ValueError("a URL may not carry a user name or password before its host")
    return value


HttpUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=2000),
    AfterValidator(_check_url),
    WithJsonSchema({"type": "string", "format": "uri", "pattern": f"^https?://[{URL_CHARS}]+$"}),
]
"""An absolute http(s) URL. Checked again, more strictly, by the URL validator."""


class Strict(BaseModel):
    """Base for every model: unknown fields are errors, values are not silently coerced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, frozen=True)


class Reference(Strict):
    """An authoritative document or a real issue thread behind the entry's facts."""

    title: Text = Field(description="What the reader will find there, e.g. 'NVIDIA Xid Catalog'.")
    url: HttpUrl = Field(description="Absolute http(s) URL of the source.")


class Symptom(Strict):
    """Something the reader observes, and why it happens."""

    symptom: Markdown = Field(description="What the reader sees: an error, a hang, a counter.")
    why: Markdown = Field(description="Why this failure produces that symptom.")


class Step(Strict):
    """One step of a checklist: confirm, prevent."""

    text: Markdown = Field(description="What to do or check, in one or two sentences.")
    command: str | None = Field(
        default=None,
        min_length=1,
        description="The exact command to run, if the step has one (shown as a code block).",
    )


class FixStep(Step):
    """One rung of the fix ladder, from the cheapest action to the most drastic."""

    rung: Rung | None = Field(
        default=None,
        description=(
            "Which kind of action this is: fix-code, configure, restart-app, reset-gpu, "
            "reboot-node, drain-node, replace-hardware, escalate, or verify (how to check the fix worked)."
        ),
    )


class Example(Strict):
    """A real log line that a signature must match, with where it was seen."""

    line: str = Field(min_length=1, description="The log line, verbatim.")
    source: HttpUrl = Field(description="URL of the public log, issue or document the line comes from.")


class Signature(Strict):
    """A regular expression that recognises this failure in a log line."""

    id: EntryId = Field(description="Identifier, unique within the entry, e.g. 'pytorch-2-1-wording'.")
    description: Markdown | None = Field(default=None, description="What variant of the message this covers.")
    pattern: str = Field(
        min_length=1,
        description="Python regular expression searched in each log line (re.search, case-sensitive unless (?i)).",
    )
    examples: list[Example] = Field(
        min_length=1, description="Real log lines the pattern must match, each with its source."
    )
    counter_examples: list[str] = Field(
        default_factory=list,
        description="Log lines the pattern must not match: near misses from healthy logs or other failures.",
    )


class OperatorView(Strict):
    """How a widely used operational tool treats an Xid code."""

    tool: Text = Field(description="The tool, e.g. 'Kubernetes device plugin', 'DCGM', 'Azure NHC'.")
    treatment: Markdown = Field(description="What the tool does when it sees the code.")
    disagrees: bool = Field(
        default=False, description="True when the tool's treatment departs from NVIDIA's catalog action."
    )
    source: HttpUrl = Field(description="Where the tool's behaviour is documented or coded.")


class XidInfo(Strict):
    """Facts from NVIDIA's Xid catalog (and the legacy table for older GPUs)."""

    code: int = Field(ge=1, le=999, description="The Xid number.")
    mnemonic: Annotated[str, StringConstraints(pattern=r"^[A-Z0-9_]+( / [A-Z0-9_]+)*$")] | None = Field(
        default=None, description="The catalog's mnemonic, e.g. ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS."
    )
    name: Text = Field(description="The catalog's short description, e.g. 'GPU has fallen off the bus'.")
    immediate_action: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_/]*( \(sympathetic\))?$")] | None = (
        Field(default=None, description="NVIDIA's immediate resolution bucket, e.g. RESTART_BM, RESET_GPU.")
    )
    investigatory_action: Annotated[str, StringConstraints(
        pattern=r"^[A-Z][A-Z0-9_/]*( \(sympathetic\))?$|^Solo: [A-Z][A-Z0-9_/]*; Not solo: [A-Z][A-Z0-9_/]*( \(follow other Xid\))?$"
    )] | None = Field(
        default=None, description="NVIDIA's investigatory resolution bucket, e.g. CONTACT_SUPPORT; where the catalog makes it "
                                  "depend on whether the Xid comes alone, both: 'Solo: RESTART_FM; Not solo: IGNORE (follow other Xid)'.")
    reset_required: bool | None = Field(
        default=None, description="Whether the GPU must be reset (or the node rebooted) before it is used again."
    )
    applies_to: list[GpuProduct] = Field(
        default_factory=list, description="GPU products the catalog lists the code for; pre-Ampere for legacy only."
    )
    unused: bool = Field(
        default=False, description="True when the catalog marks the code unused on Ampere and newer GPUs."
    )
    legacy_causes: list[LegacyCause] = Field(
        default_factory=list, description="Possible causes ticked in NVIDIA's legacy Xid table."
    )
    origin: list[Origin] = Field(
        default_factory=list, description="Where the fault most likely comes from, most likely first."
    )
    operators: list[OperatorView] = Field(
        default_factory=list, description="How operational tools treat the code, with disagreements marked."
    )


class Entry(Strict):
    """One failure class: what it is, how to recognise it, and what to do."""

    id: EntryId = Field(description="Identifier, equal to the file name without .yaml, e.g. 'xid-79'.")
    title: Text = Field(description="Page title carrying the canonical error text, e.g. 'Xid 79: GPU has fallen off the bus'.")
    category: Category = Field(description="Which section of the atlas the entry belongs to.")
    severity: Severity = Field(description="How bad it is for a running job: info, low, medium, high, critical.")
    owner: Owner = Field(description="Who usually has to act: application, framework, driver, firmware, hardware, network, platform.")
    tags: list[Text] = Field(default_factory=list, description="Search keywords beyond the title.")
    aliases: list[Text] = Field(
        default_factory=list,
        description="Other names and exact error strings readers search for, e.g. 'cudaErrorIllegalAddress'.",
    )
    xid: XidInfo | None = Field(default=None, description="Catalog facts; required for category xid, absent otherwise.")

    summary: Markdown = Field(description="The quick answer: what happened and what to do, in two to four sentences.")
    root_cause: Markdown = Field(description="What is actually broken.")
    mechanism: Markdown | None = Field(default=None, description="How the fault turns into the messages the reader sees.")
    at_scale: Markdown | None = Field(default=None, description="How it shows on one GPU versus a thousand.")
    notes: Markdown | None = Field(default=None, description="Anything else worth knowing: version differences, myths.")

    symptoms: list[Symptom] = Field(default_factory=list, description="What the reader observes, each with why.")
    affects: list[Text] = Field(default_factory=list, description="Systems and layers involved, e.g. 'PCIe', 'NCCL'.")
    confirm: list[Step] = Field(default_factory=list, description="How to confirm the diagnosis, with commands.")
    fix: list[FixStep] = Field(default_factory=list, description="The fix ladder, cheapest first, with exact commands.")
    prevent: list[Step] = Field(default_factory=list, description="How to stop it happening again.")

    signatures: list[Signature] = Field(default_factory=list, description="Regular expressions that recognise the failure in logs.")

    related: list[EntryId] = Field(default_factory=list, description="Ids of entries worth reading alongside.")
    causes: list[EntryId] = Field(default_factory=list, description="Ids of failures this one commonly triggers (collateral).")
    caused_by: list[EntryId] = Field(default_factory=list, description="Ids of failures that commonly trigger this one.")
    wrapper: bool = Field(
        default=False,
        description=("True when this failure is a launcher's or wrapper's report that a worker or step failed "
                     "(torchrun's ChildFailedError, mpirun's non-zero exit banner, the shell's 'Segmentation fault'): "
                     "in a log where any other failure is found, the diagnosis ranks this one as collateral of it; "
                     "where it is the only one, the closest wording still looks for a cause, and the site search "
                     "lists it after any entry recognised in the same paste."),
    )

    references: list[Reference] = Field(min_length=1, description="Authoritative sources and real issue threads.")


PROSE_FIELDS: tuple[str, ...] = ("summary", "root_cause", "mechanism", "at_scale", "notes")


def entry_json_schema() -> dict:
    """The JSON Schema of an entry file, as editors consume it."""
    schema = Entry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "GPU Failure Atlas entry"
    return schema


def field_paths(model: type[BaseModel] = Entry, prefix: str = "") -> list[str]:
    """Every documented field path of the model, e.g. 'xid.operators[].tool'."""
    paths: list[str] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        paths.append(path)
        sub = nested_model(info.annotation)
        if sub is not None:
            list_suffix = "[]" if _is_list(info.annotation) else ""
            paths.extend(field_paths(sub, f"{path}{list_suffix}."))
    return paths


def nested_model(annotation: object) -> type[BaseModel] | None:
    """The model a field holds (directly, in a list or as an optional value), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = nested_model(arg)
        if found is not None:
            return found
    return None


def _is_list(annotation: object) -> bool:
    if getattr(annotation, "__origin__", None) is list:
        return True
    return any(_is_list(a) for a in getattr(annotation, "__args__", ()) or ())


__all__ = [
    "CATEGORIES",
    "CATEGORY_TITLES",
    "Entry",
    "Example",
    "FixStep",
    "ID_PATTERN",
    "PROSE_FIELDS",
    "Reference",
    "SEVERITIES",
    "Signature",
    "Step",
    "Symptom",
    "XidInfo",
    "entry_json_schema",
    "field_paths",
    "nested_model",
]
