"""What the site search cannot run: Python pattern syntax that JavaScript's RegExp refuses or reads otherwise.

The site search (``docs/javascripts/kb-search.js``, ``toRegExp``) recognises a pasted log line by
the signatures' own patterns, compiled by the browser's ``RegExp`` without the ``u`` flag. It
translates only what the two languages spell differently: a leading ``(?i)`` becomes the ``i``
flag, ``(?P<name>`` becomes ``(?<name>``, ``\\Z`` becomes ``$`` and ``\\A`` becomes ``^`` (the
last three as plain text replacements). Anything else Python takes and JavaScript does not is
either a syntax error there (the search then leaves the signature out, silently) or, worse, read
as other text (``{,3}`` is the literal text "{,3}" to JavaScript, ``\\a`` the letter a).
``browser_problem`` names the first such construct so that validation (KB029) refuses it.

The log doctor runs Python itself (Pyodide) and needs none of this. Lookarounds and
backreferences are refused as backtracking (KB023) and are not judged here.
"""

from __future__ import annotations

import re

# a pattern holding none of these needs no closer look (most patterns): an inline group other
# than (?: (?P< (?= (?! (?<, an escape JavaScript reads otherwise, a quantifier followed by '+',
# a {,n} repeat, a class opening with ']', a character outside the BMP, or a text the
# translation rewrites
_SUSPECT = re.compile(r"\(\?[^:P=!<]|\(\?P|\\[NaUAZ]|[*+?}]\+|\{,|\[\^?\]|[\U00010000-\U0010ffff]")
_FLAGS = re.compile(r"\(\?([aiLmsux]+(?:-[imsx]+)?|-[imsx]+)([:)])")
_REPEAT = re.compile(r"\{([0-9]*)(,?)([0-9]*)\}")
_REWRITES = {"(?P<": ("a named group (?P<name>...)", "write that parenthesis as [(]"),
             "\\Z": ("\\Z (the end of the line)", "write that backslash as [\\\\] (a class)"),
             "\\A": ("\\A (the start of the line)", "write that backslash as [\\\\] (a class)")}


def browser_problem(pattern: str) -> tuple[str, str] | None:
    """The first construct of ``pattern`` the site search's JavaScript cannot run as Python does,
    as (what, how to write it instead), or None. ``pattern`` compiles in Python."""
    if not _SUSPECT.search(pattern):
        return None
    found: list[tuple[str, str]] = []
    starts: set[int] = set()  # where a construct that the translation rewrites really starts
    i = 4 if pattern.startswith("(?i)") else 0  # the one flag the translation takes
    n = len(pattern)
    in_class = False
    while i < n and not found:
        ch = pattern[i]
        if ch == "\\":
            escape = pattern[i + 1:i + 2]
            if escape in ("A", "Z") and not in_class:
                starts.add(i)
            elif escape == "N":
                found.append((f"a named character \\N{{...}} at position {i}",
                              "write the character itself, or its \\uXXXX escape"))
            elif escape == "a":
                found.append((f"the escape \\a (the bell character) at position {i}", "write \\x07"))
            elif escape == "U":
                found.append((f"an escape \\U at position {i}",
                              "write the character itself, or \\uXXXX for a character up to U+FFFF"))
            i += 2
            continue
        if ord(ch) > 0xFFFF and in_class:
            found.append((f"a character beyond U+FFFF inside [...] at position {i} (JavaScript sees two halves of it)",
                          "write the character outside the class, as an alternative: (?:x|y)"))
            break
        if in_class:
            in_class = ch != "]"
            i += 1
            continue
        if ch == "[":
            j = i + 1 + (pattern[i + 1:i + 2] == "^")
            if pattern[j:j + 1] == "]":
                found.append((f"a class that opens with ']' at position {i} (JavaScript reads [] as nothing, [^] as "
                              "any character)", "escape it: []...] becomes [\\]...]"))
                break
            in_class, i = True, j
            continue
        if ch == "(" and pattern[i + 1:i + 2] == "?":
            rest = pattern[i + 2:i + 3]
            if rest == "P" and pattern[i + 3:i + 4] == "<":
                starts.add(i)
            elif rest == "#":
                found.append((f"a comment (?#...) at position {i}", "remove the comment"))
            elif rest == ">":
                found.append((f"an atomic group (?>...) at position {i}", "write a plain group (?:...)"))
            elif (flags := _FLAGS.match(pattern, i)) is not None:
                scoped = flags.group(2) == ":"
                what = f"(?{flags.group(1)}:...)" if scoped else f"(?{flags.group(1)})"
                what = ("a scoped flag group " if scoped else "an inline flag ") + what
                if "x" in flags.group(1):
                    what += " (verbose mode)"
                found.append((f"{what} at position {i}", "only a leading (?i), for the whole pattern, is taken: spell "
                              "the cases out with classes ([Ff][Aa][Ll][Ss][Ee] for (?i:false)), or leave the flag out"))
            i += 2
            continue
        if ch in "*+?" or (ch == "{" and (repeat := _REPEAT.match(pattern, i)) is not None):
            end = i + 1
            if ch == "{":
                lo, comma, hi = repeat.groups()
                if not lo and not comma:  # {}: the text, to both
                    i += 2
                    continue
                if not lo:
                    found.append((f"a repeat {repeat.group()} at position {i} (JavaScript reads it as that text)",
                                  f"write {{0,{hi}}}" if hi else "write *"))
                    break
                end = repeat.end()
            if pattern[end:end + 1] == "+":
                found.append((f"a possessive repeat {pattern[i:end + 1]} at position {i}",
                              "drop the last '+': a plain repeat matches the same lines here"))
                break
            i = end + (pattern[end:end + 1] == "?")
            continue
        i += 1
    if found:
        return found[0]
    for text, (what, hint) in _REWRITES.items():  # the translation replaces these as text, wherever they stand
        at = pattern.find(text)
        while at >= 0:
            if at not in starts:
                return f"the text {text} at position {at}, which the site search's translation would rewrite as {what}", hint
            at = pattern.find(text, at + 1)
    return None
