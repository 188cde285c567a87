"""The kernel library: one teaching kernel per module, listed in teaching order.

Importing this package never imports torch, triton or the kernel modules (the web
server imports it); titles and notes come from each file's docstring, parsed with
`ast`. Every module follows the same layout: docstring (title, blank line, teaching
note), imports, `@triton.jit` kernel(s), launcher, `reference()`, `make_inputs(small)`,
`example()` and `check()`.

    from kernels import LIBRARY, get
    get("softmax").source()
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent

SLUGS = ("vector_add", "softmax", "matmul", "gelu", "bias_relu", "add_mul_act", "giou",
         "coalescing", "coarsening")


@dataclass(frozen=True)
class LibraryKernel:
    slug: str      # "vector_add": the module kernels.<slug>, the file <slug>.py
    title: str     # first line of the module docstring
    note: str      # the rest of the docstring: what to look at in the compiled output
    path: Path     # absolute path of the .py file

    @property
    def filename(self) -> str:
        return self.path.name

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")


def _load(slug: str) -> LibraryKernel:
    path = _HERE / f"{slug}.py"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))) or ""
    title, _, note = doc.partition("\n")
    return LibraryKernel(slug=slug, title=title.strip() or slug, note=note.strip(), path=path)


LIBRARY: tuple[LibraryKernel, ...] = tuple(_load(slug) for slug in SLUGS)

_BY_SLUG = {k.slug: k for k in LIBRARY}


def get(slug: str) -> LibraryKernel:
    """The library kernel named `slug`; KeyError naming the known slugs otherwise."""
    try:
        return _BY_SLUG[slug]
    except KeyError:
        raise KeyError(f"no library kernel {slug!r}; known: {', '.join(SLUGS)}") from None
LESSON_KERNELS: tuple[LibraryKernel, ...] = tuple(_load(slug) for slug in ("strided", "transpose"))  # lessons only (not in SLUGS)
