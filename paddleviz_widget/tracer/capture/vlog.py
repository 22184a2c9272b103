"""Switch Paddle's C++ VLOG level for a block and put the previous level back afterwards.

Paddle has no getter for the level. ``paddle.get_flags(["FLAGS_v"])`` refuses ("cannot get its
value through this function") and Paddle's own ``vlog_guard`` simply resets to 0. The most
faithful reading is glog's own ``FLAGS_v`` integer, which libpaddle exports as the C++ symbol
``fLI::FLAGS_v``; it is what ``set_vlog_level(int)`` writes and what ``GLOG_v`` initialises. When
that symbol cannot be reached (another build or platform) the ``GLOG_v`` environment variable is
the fallback, then glog's default 0.

Limitations: per-module levels (``GLOG_vmodule`` or ``set_vlog_level({...})``) are neither read
nor restored, and they override the global level for their files. ``set_vlog_level`` itself logs
"Set the VLOG level of all modules to N" at the old level, so enter ``vlog_level`` inside
``capture_stderr`` to keep that line out of the user's stderr.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Paddle's own switch (set_vlog_level) is there from 3.3 on; on 2.6.x / 3.0.x vlog_level writes
# glog's FLAGS_v itself (every VLOG site reads it), which needs no GLOG_v before import.
RUNTIME_SWITCH_MIN = (3, 3)
_FLAGS_V_SYMBOL = "_ZN3fLI7FLAGS_vE"  # fLI::FLAGS_v, Itanium C++ mangling

_flags_v: ctypes.c_int | None = None


class VlogUnavailableError(RuntimeError):
    """The installed Paddle cannot change its VLOG level while running."""


def _core() -> Any:
    import paddle

    return paddle.base.core


def _paddle_version() -> tuple[int, int]:
    import paddle

    match = re.match(r"(\d+)\.(\d+)", str(paddle.__version__))
    if match is None:
        return (0, 0)
    return (int(match.group(1)), int(match.group(2)))


def runtime_switch_available() -> bool:
    version = _paddle_version()
    # "0.0" is a develop build, which is newer than any release.
    new_enough = version >= RUNTIME_SWITCH_MIN or version == (0, 0)
    return new_enough and callable(getattr(_core(), "set_vlog_level", None))


def flags_v_cell() -> ctypes.c_int | None:
    """glog's FLAGS_v inside the already-loaded libpaddle, or None if not reachable."""
    global _flags_v
    if _flags_v is not None:
        return _flags_v
    try:
        import paddle.base.libpaddle as libpaddle

        # RTLD_NOLOAD: only look at the copy Python already loaded, never load a second one.
        mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 0)
        lib = ctypes.CDLL(libpaddle.__file__, mode=mode)
        _flags_v = ctypes.c_int.in_dll(lib, _FLAGS_V_SYMBOL)
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    return _flags_v


def switched_at_run_time() -> bool:
    """Whether vlog_level can raise the level here: Paddle's switch (3.3) or glog's FLAGS_v
    (2.6, 3.0), so no GLOG_v before ``import paddle`` is needed."""
    return runtime_switch_available() or flags_v_cell() is not None


def _env_level() -> int | None:
    try:
        return int(os.environ["GLOG_v"])  # noqa: SIM112 - glog's own spelling
    except (KeyError, ValueError):
        return None


def get_vlog_level() -> int:
    """The global VLOG level in effect (see the module docstring for how it is read)."""
    cell = flags_v_cell()
    if cell is not None:
        return int(cell.value)
    env = _env_level()
    return 0 if env is None else env


def _unavailable_message(level: int) -> str:
    import paddle

    return (
        f"paddlepaddle {paddle.__version__} cannot switch C++ VLOG on at run time "
        f"(needed: level {level}, in effect: {get_vlog_level()}). Upgrade to "
        "paddlepaddle>=3.3, or set the environment variable GLOG_v="
        f"{level} before `import paddle` (e.g. `GLOG_v={level} jupyter lab`)."
    )


def set_vlog_level(level: int) -> None:
    """Set the global VLOG level now; VlogUnavailableError if this Paddle cannot."""
    if not runtime_switch_available():
        raise VlogUnavailableError(_unavailable_message(level))
    _core().set_vlog_level(int(level))


@contextmanager
def vlog_level(level: int) -> Iterator[int]:
    """Run the block with VLOG at ``level``; yield the level that was in effect before.

    Without Paddle's switch (2.6, 3.0) a level already at least ``level`` (GLOG_v before import)
    is left alone; otherwise glog's FLAGS_v is written and put back, and only where that cannot
    be reached does VlogUnavailableError say how to fix it.
    """
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise ValueError(f"VLOG level must be a non-negative int, got {level!r}")
    previous = get_vlog_level()
    if not runtime_switch_available():
        if previous >= level:
            yield previous
            return
        cell = flags_v_cell()
        if cell is None:
            raise VlogUnavailableError(_unavailable_message(level))
        cell.value = level
        try:
            yield previous
        finally:
            cell.value = previous
        return
    _core().set_vlog_level(level)
    try:
        yield previous
    finally:
        _core().set_vlog_level(previous)


@contextmanager
def vlog_silenced() -> Iterator[None]:
    """No VLOG for a moment, written straight into glog's FLAGS_v (which every VLOG site
    reads): silent and cheap, for ops of ours that run inside a captured backward and whose
    log lines would otherwise be read as Paddle's account of the user's nodes."""
    cell = flags_v_cell()
    if cell is None or cell.value == 0:
        yield
        return
    previous = cell.value
    cell.value = 0
    try:
        yield
    finally:
        cell.value = previous


# glog's FLAGS_minloglevel (fLI::FLAGS_minloglevel): records below it are dropped before they
# are written, VLOG (an INFO record) included. GLOG_minloglevel=2 is a common way to quiet
# Paddle; it would hide the whole backward log.
_MINLOGLEVEL_SYMBOL = "_ZN3fLI17FLAGS_minloglevelE"
_minloglevel: ctypes.c_int | None = None


def _minloglevel_cell() -> ctypes.c_int | None:
    global _minloglevel
    if _minloglevel is None:
        try:
            import paddle.base.libpaddle as libpaddle

            mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 0)
            lib = ctypes.CDLL(libpaddle.__file__, mode=mode)
            _minloglevel = ctypes.c_int.in_dll(lib, _MINLOGLEVEL_SYMBOL)
        except (ImportError, OSError, ValueError, AttributeError):
            return None
    return _minloglevel


def min_log_level() -> int:
    """glog's minimum severity written (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL)."""
    cell = _minloglevel_cell()
    if cell is not None:
        return int(cell.value)
    try:
        return int(os.environ.get("GLOG_minloglevel", "0"))  # noqa: SIM112 - glog's spelling
    except ValueError:
        return 0


@contextmanager
def info_logged() -> Iterator[int]:
    """INFO records (VLOG) written for the block, whatever GLOG_minloglevel says; yields the
    level in effect before. VlogUnavailableError, saying why, if it cannot be lowered."""
    cell = _minloglevel_cell()
    previous = min_log_level()
    if previous == 0:
        yield previous
        return
    if cell is None:
        raise VlogUnavailableError(
            f"GLOG_minloglevel={previous} is set, which hides Paddle's C++ log (VLOG), and this "
            "Paddle does not let it be lowered while running: slot names and the shapes of the "
            "tensors each backward saved are missing (edge gradients still come from Paddle's "
            "dump where it writes one). Unset it, or set it to 0, before `import paddle`."
        )
    cell.value = 0
    try:
        yield previous
    finally:
        cell.value = previous
