"""Which paths in a stage's line info are the user's kernel file (and not Triton's own
library, whose inlined helpers the source map attributes to the user's calling line)."""
from __future__ import annotations

# Paths of Triton's own library; never the user's file even if the names collide.
_LIBRARY_MARKERS = ("/triton/language/", "/site-packages/triton/")


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
