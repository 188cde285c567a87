"""Which paths in a stage's line info are the user's kernel file, which are another file of
the user's (a helper imported from a module of their own), and which are Triton's own
library, whose inlined helpers the source map attributes to the user's calling line."""
from __future__ import annotations

# Paths of Triton's own library (and Inductor's runtime helpers); never the user's file
# even if the names collide.
_LIBRARY_MARKERS = ("/triton/language/", "/site-packages/triton/", "/torch/_inductor/")


def is_user_file(path: str, filename: str) -> bool:
    """`path` (as a stage spells it) is the user's file: exactly `filename`, or an
    absolute path ending in `/filename` that is not inside Triton's package."""
    if not path or not filename:
        return False
    names = {filename, filename.rsplit("/", 1)[-1]}
    if path in names:
        return True
    return (any(path.endswith("/" + n) for n in names)
            and not any(m in path for m in _LIBRARY_MARKERS))


def is_library_file(path: str) -> bool:
    """`path` is inside Triton's package (or Inductor's runtime): code the user did not write."""
    return any(m in path for m in _LIBRARY_MARKERS)


def frame(path: str, line: int, filename: str) -> tuple[str, int] | None:
    """One frame of a chain of call sites, as the source map keeps it: ("", line) in the
    kernel file, (path, line) in another file of the user's, None for Triton's library,
    compiler-made code (line 0) and nameless paths."""
    if line <= 0 or not path:
        return None
    if is_user_file(path, filename):
        return ("", line)
    if is_library_file(path):
        return None
    return (path, line)


def innermost(chain: tuple) -> int | None:
    """The first kernel-file line of a chain of frames (innermost first), or None."""
    return next((line for path, line in chain if not path), None)


def common_prefix(chains) -> tuple:
    """The frames every chain agrees on, innermost first: what is known for sure of code
    that several chains could stand for (a helper called from two lines: its own line)."""
    chains = list(chains)
    if not chains:
        return ()
    out = []
    for frames in zip(*chains):
        if any(f != frames[0] for f in frames):
            break
        out.append(frames[0])
    return tuple(out)
