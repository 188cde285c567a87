"""Untrusted text (a link's values, a job's messages) inside Markdown that Streamlit renders:
shown as the characters it is, never as Markdown (no image fetched, no link drawn)."""
from __future__ import annotations

import re


def code_span(text: str, limit: int = 200) -> str:
    """`text` as one CommonMark code span: fenced by a run of backticks longer than any run in
    it, so nothing inside is read as Markdown or HTML; line breaks become spaces, and the text
    is cut at `limit` characters."""
    text = " ".join(str(text)[:limit].split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


# What makes a construct in Streamlit's Markdown: images and links (`![`, `[`, `]`), HTML and
# autolinks (`<`, `>`), code, emphasis and strikethrough (`*`, `~`, `_` at a word's edge), colour
# directives (`:red[...]`), maths (`$`), tables, headings (`#` starting a line), and the escape
# itself. GFM's bare autolinks (`http://h`, `www.h`, `a@h.org`) are found after escapes are
# resolved: a word joiner (U+2060, invisible) inside `://`, `www.` and before an address's `@` breaks them.
_ESCAPED = str.maketrans({c: "\\" + c for c in "\\`*[]<>!$~|{}"})
_CONSTRUCTS = re.compile(r"(?i)://|\bwww\.|(?<=\w)@(?=[\w.-]+\.\w)|(?<!\w)_|_(?!\w)|^[ \t]*#", re.MULTILINE)
_JOINER = "\u2060"


def _escape(m: re.Match) -> str:
    found = m.group(0)
    if found == "://":
        return ":" + _JOINER + "//"
    if found.lower() == "www.":
        return found[:3] + _JOINER + "."
    if found == "@":
        return _JOINER + "@"
    return found[:-1] + "\\" + found[-1]


def plain(text: str) -> str:
    """`text` for a Markdown body (st.error, st.warning, ...) with every character that could
    start a construct escaped: CommonMark shows an escaped character as itself, so no image,
    link, autolink, HTML, emphasis or colour directive can be made of it; the rest
    (`add_kernel`, `file.py:27`, parentheses, quotes) reads as written."""
    return _CONSTRUCTS.sub(_escape, str(text).translate(_ESCAPED))
