"""Content safety: raw HTML and script links are found outside code and escaped on render."""

from __future__ import annotations

import pytest

from generator.corpus.safety import code_mask, escape_markdown, fence, find_unsafe


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
    from generator.corpus.safety import escape_text

    out = escape_text("bind to [::]:29500 | `code` *x* <b>")
    for ch in "[]|`*<>":
        assert ch not in out, ch


def test_an_escaped_backtick_opens_no_code_span() -> None:
    text = "see \\`<script>alert(1)</script>\\` here"
    assert find_unsafe(text) and "&lt;script" in escape_markdown(text)


def test_a_code_span_does_not_cross_paragraphs_or_list_items() -> None:
    for text in ("opens `here\n\n<img src=x onerror=alert(1)> closes` there",
                 "- item `one\n- <img src=x onerror=alert(1)> two`"):
        assert find_unsafe(text), text
        assert "<img" not in escape_markdown(text)
    assert find_unsafe("a span `that runs\nover two lines <x>` is code") == []


@pytest.mark.parametrize("text, expected", [
    ("<b onmouseover=alert(1)>x</b>", "attribute onmouseover"),
    ("[x](javascript:alert(1))", "renders a link to 'javascript:alert(1)'"),
    ("![p](https://evil.example/p.png)", "renders an image from 'https://evil.example/p.png'"),
    ("<!-- hidden -->", "renders an HTML comment"),
    ("<iframe src=x></iframe>", "renders a <iframe> element"),
])
def test_rendered_html_is_checked_against_the_allow_list(text: str, expected: str) -> None:
    from generator.corpus.safety import rendered_violations

    found = rendered_violations(text)
    assert any(expected in v for v in found), found


def test_ordinary_markdown_renders_within_the_allow_list() -> None:
    from generator.corpus.safety import rendered_violations

    text = ("Use **`nvidia-smi -q`** and see [the guide](https://docs.nvidia.com/x), [Xid 79](xid-79.md) or\n"
            "![diagram](../img/a.png).\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n1. one\n2. two\n\n> quoted & fine\n")
    assert rendered_violations(text) == []


@pytest.mark.parametrize("url, shown", [
    ("https://docs.nvidia.com/x)<script>", "https://docs.nvidia.com/x%29%3Cscript%3E"),
    ('https://e.org/"a b', "https://e.org/%22a%20b"),
    ("javascript:alert(1)", "#unsafe-link"),
    ("https://e.org/ok?a=1&b=2#f", "https://e.org/ok?a=1&b=2#f"),
])
def test_urls_in_link_targets_are_encoded(url: str, shown: str) -> None:
    from generator.corpus.safety import safe_url

    assert safe_url(url) == shown


def test_attribute_lists_and_remote_images_are_inert_after_escaping() -> None:
    out = escape_markdown('para\n{: onclick="x" }\n\n![p](https://evil.example/p.png) ![ok](../a.png) `{: kept }`')
    assert "{:" not in out.replace("`{: kept }`", "") and "&#123;: onclick" in out
    assert "&#33;[p](https://evil.example/p.png)" in out and "![ok](../a.png)" in out


@pytest.mark.parametrize("text", [
    "> [x]: javascript:alert(1)\n\n[ref][x]",
    "- [x]: javascript:alert(1)\n\n[ref][x]",
    "1. a\n\n    - [x]: javascript:alert(1)\n\n[ref][x]",
    "[x]:\njavascript:alert(1)\n\n[ref][x]",
    "> [x]:\n> javascript:alert(1)\n\n[ref][x]",
])
def test_a_reference_definition_in_a_quote_a_list_or_over_two_lines_is_found_and_disabled(text: str) -> None:
    """Red team s24: only definitions at the start of a line were seen; Markdown also reads them
    inside a quote or a list item and with the target on the next line: the link went live."""
    from generator.corpus.safety import render_prose, rendered_violations

    assert find_unsafe(text)
    escaped = escape_markdown(text)
    assert rendered_violations(escaped) == [], render_prose(escaped)
    assert "href=\"javascript" not in render_prose(escaped) and "unsafe-link" in render_prose(escaped)


def test_safe_reference_definitions_in_quotes_and_lists_are_kept() -> None:
    text = "> [doc]: https://docs.nvidia.com/x\n\n- [ok]: mailto:a@example.org\n\n[ref][doc] and [mail][ok]"
    assert find_unsafe(text) == [] and escape_markdown(text) == text


def test_attribute_lists_are_found_in_linear_time_as_the_pattern_finds_them() -> None:
    """Red team s24: the attribute-list pattern split the rest of a line at every '=' from every
    '{': 6 KB of '{a=' took a minute to validate, 60 KB a day."""
    import random
    import time

    from generator.corpus.safety import _ATTR_LIST, _attr_lists

    started = time.monotonic()
    assert find_unsafe("{a=" * 300_000) == [] and find_unsafe("{a=" * 300_000 + "}")
    assert time.monotonic() - started < 2
    rng = random.Random(24)
    for _ in range(20_000):
        text = "".join(rng.choice("{}=:.#aZ \n\t1\u00a0") for _ in range(rng.randint(0, 12)))
        assert list(_attr_lists(text)) == [(m.start(), m.end()) for m in _ATTR_LIST.finditer(text)], repr(text)


def test_reference_definitions_are_found_in_linear_time() -> None:
    import time

    text = "[a\n" * 200_000 + "](x)"  # a label that may hold '[' ran from every line to the end: minutes
    started = time.monotonic()
    find_unsafe(text)
    escape_markdown(text)
    assert time.monotonic() - started < 2
