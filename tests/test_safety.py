"""Content safety: raw HTML and script links are found outside code and escaped on render."""

from __future__ import annotations

import pytest

from generator.safety import code_mask, escape_markdown, fence, find_unsafe


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "see <img src=x onerror=alert(1)>",
        "an <iframe src='https://evil.example'></iframe>",
        "<!-- comment -->",
        "[click](javascript:alert(1))",
        "[click]( JaVaScRiPt:alert(1))",
        "[click](jav&#x61;script:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD4=)",
        "[x]: vbscript:msgbox",
        "<svg onload=alert(1)>",
    ],
)
def test_unsafe_markup_is_found(text: str) -> None:
    assert find_unsafe(text), text


@pytest.mark.parametrize(
    "text",
    [
        "pid is `'<unknown>'` in interrupt context",
        "```\n<script>shown as code</script>\n```",
        "a [link](https://docs.nvidia.com/deploy/xid-errors/) and [mail](mailto:a@b.org)",
        "a relative [link](../entries/xid-79.md)",
        "x < y and 3<4",
        "``code with ` inside <b>``",
    ],
)
def test_safe_markdown_is_accepted(text: str) -> None:
    assert find_unsafe(text) == []


def test_finding_offsets_point_at_the_markup() -> None:
    text = "fine text\nthen <b>bold</b>"
    offsets = [f.offset for f in find_unsafe(text)]
    assert text[offsets[0]:offsets[0] + 3] == "<b>"


def test_code_mask_covers_spans_and_fences() -> None:
    text = "a `<x>` b\n```\n<y>\n```\n<z>"
    mask = code_mask(text)
    assert mask[text.index("<x>")] and mask[text.index("<y>")]
    assert not mask[text.index("<z>")]


def test_escape_markdown_neutralises_html_and_script_links() -> None:
    out = escape_markdown("<script>x</script> `<kept>` [a](javascript:alert(1))")
    assert "<script>" not in out and "&lt;script>" in out
    assert "`<kept>`" in out
    assert "javascript:" not in out


def test_fence_cannot_be_closed_by_content() -> None:
    content = "x\n```\n<script>alert(1)</script>"
    block = fence(content)
    opening = block.split("\n", 1)[0]
    assert opening.startswith("````")
    assert block.endswith("\n" + opening.rstrip("bashtext"))


def test_escape_text_cannot_break_a_link_or_a_table_cell() -> None:
    from generator.safety import escape_text

    out = escape_text("bind to [::]:29500 | `code` *x* <b>")
    for ch in "[]|`*<>":
        assert ch not in out, ch
