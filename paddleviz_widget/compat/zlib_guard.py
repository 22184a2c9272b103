"""Paddle 2.6's libpaddle carries zlib 1.2.8 and exports it. When ``import paddle`` comes before
Python's zlib module is loaded (a script's usual first line: paddle then loads zlib itself),
that module's calls bind partly to Paddle's copy, whose stream layout is older than the one it
was built for (zlib 1.2.9 changed it): the process segfaults at the first inflate (gzip, and
``import pyarrow``, which the run log needs). Known from facts, never by trying: the copy's
version, and the order of sys.modules (the order of imports). Paddle 3.0's copy is 1.2.11, of
the same layout; 3.3 exports none. A notebook kernel and pytest load zlib before paddle."""

from __future__ import annotations

import ctypes
import re
import sys
from functools import lru_cache

_LIBPADDLE = "paddle.base.libpaddle"
_NEW_LAYOUT = (1, 2, 9)

ZLIB_BROKEN = (
    "paddlepaddle {version} carries zlib {zlib}, which crashes Python's zlib (gzip, pyarrow: "
    "the run log) once `import paddle` has come first in the process. Put `import "
    "paddleviz_widget` (or `import zlib`) above `import paddle` in your script, run it as "
    "`python -m paddleviz_widget train.py --run-dir DIR`, or upgrade to paddlepaddle>=3.0"
)


def zlib_broken() -> str | None:
    """Why Python's zlib would crash this process (ZLIB_BROKEN, filled in), or None."""
    lib = sys.modules.get(_LIBPADDLE)
    path = getattr(lib, "__file__", None)
    if not path:
        return None
    order = list(sys.modules)  # insertion order: the order modules were imported
    if "zlib" in sys.modules and order.index("zlib") < order.index(_LIBPADDLE):
        return None  # bound to the system's zlib before Paddle's was loaded
    version = _paddles_zlib(path)
    if version is None or version >= _NEW_LAYOUT:
        return None
    paddle = sys.modules.get("paddle")
    return ZLIB_BROKEN.format(
        version=getattr(paddle, "__version__", "?"), zlib=".".join(map(str, version))
    )


@lru_cache(maxsize=4)
def _paddles_zlib(path: str) -> tuple[int, ...] | None:
    """The version of the zlib libpaddle exports (its own zlibVersion, a static string)."""
    try:
        call = ctypes.CDLL(path).zlibVersion  # the loaded library: dlopen only counts it again
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_char_p
    digits = re.findall(rb"\d+", call() or b"")[:3]
    return tuple(int(d) for d in digits) if len(digits) == 3 else None


def refuse_broken_zlib() -> None:
    """Raise RunLogError, before any gzip or pyarrow, where Python's zlib would crash."""
    why = zlib_broken()
    if why is not None:
        from ..errors import RunLogError

        raise RunLogError(why)
