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


_PUNCTUATION = str.maketrans({c: "\\" + c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})


def plain(text: str) -> str:
    """`text` for a Markdown body (st.error, st.warning, ...) with every ASCII punctuation
    character escaped: CommonMark shows an escaped character as itself, so no image, link,
    autolink, HTML, emphasis, emoji code or colour directive can be made of it."""
    return str(text).translate(_PUNCTUATION)
