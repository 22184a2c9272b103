"""Ask Paddle for per-op Python stacks only where they can say more than layer hooks do.

Paddle formats a Python stack for every op while FLAGS_call_stack_level is 3 (~0.1 ms an op).
Inside a layer whose ``forward`` is library code (paddle.nn, paddle.vision, ...) the innermost
user-code frame of every op is the line that called that layer, which the layer hooks record
per call anyway. So while such a layer runs, the flag goes back to the user's level; ops in
user-written forward code and outside any layer (a loss in a notebook cell) still get stacks.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from ..parse.call_sites import is_library_file

CALL_STACK_FLAG = "FLAGS_call_stack_level"
_SURROGATE = re.compile("[\ud800-\udfff]")


# Weak keys: a class redefined in a notebook cell must not be kept alive by this cache.
_LIBRARY_FORWARD: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()


def _forward_is_library(layer_type: type) -> bool:
    known = _LIBRARY_FORWARD.get(layer_type)
    if known is None:
        code = getattr(getattr(layer_type, "forward", None), "__code__", None)
        known = code is not None and is_library_file(code.co_filename)
        _LIBRARY_FORWARD[layer_type] = known
    return known


class LibraryForwardGate:
    """Layer-call observer for LayerScopeRecorder; inert until ``arm``. The level follows the
    innermost layer call: a user-written layer inside a library one (``nn.Sequential(MyBlock(),
    ...)``) has its ops' stacks again, and the library layers inside it go without."""

    def __init__(self) -> None:
        self._levels: tuple[int, int] | None = None  # (inside library layers, elsewhere)
        self._calls: list[bool] = []  # per observed call, innermost last: is its forward library

    def arm(self, inside: int, elsewhere: int) -> None:
        self._levels = (inside, elsewhere)

    def disarm(self) -> None:
        self._levels = None
        self._calls.clear()

    def _set(self, library: bool) -> None:
        import paddle

        assert self._levels is not None
        paddle.set_flags({CALL_STACK_FLAG: self._levels[0] if library else self._levels[1]})

    def enter(self, layer: Any) -> bool:
        """A layer call starts; True if ``leave`` must be called when it ends."""
        if self._levels is None:
            return False
        library = _forward_is_library(type(layer))
        calls = self._calls
        if not calls and not library:
            return False  # user code outside library layers: stacks stay as they are
        if library != (calls[-1] if calls else False):
            self._set(library)
        calls.append(library)
        return True

    def leave(self) -> None:
        calls = self._calls
        if self._levels is None or not calls:
            return
        library = calls.pop()
        if library != (calls[-1] if calls else False):
            self._set(not library)


@contextmanager
def call_stacks_off() -> Iterator[None]:
    """No per-op Python stacks for a while (the ops a backward hook runs are not the user's:
    under FLAGS_call_stack_level=3 each would format a Python traceback)."""
    import paddle

    try:
        old = paddle.get_flags([CALL_STACK_FLAG])[CALL_STACK_FLAG]
    except (ValueError, KeyError):  # this Paddle has no such flag
        yield
        return
    if int(old) == 0:
        yield
        return
    paddle.set_flags({CALL_STACK_FLAG: 0})
    try:
        yield
    finally:
        paddle.set_flags({CALL_STACK_FLAG: old})


def call_stacks_recorded() -> bool:
    """Whether Paddle records a Python stack per op now (FLAGS_call_stack_level >= 3): the
    dump's call-stack file then names each GradNode's user line."""
    import paddle

    try:
        return int(paddle.get_flags([CALL_STACK_FLAG])[CALL_STACK_FLAG]) >= 3
    except (ValueError, KeyError):
        return False


def _not_utf8(name: object) -> bool:
    # A path whose bytes are not UTF-8 is held by Python with surrogate escapes (PEP 383).
    return isinstance(name, str) and not name.isascii() and _SURROGATE.search(name) is not None


def _file_of(module: object) -> object:
    try:  # anything can sit in sys.modules, and a lazy module's __getattr__ may raise
        return getattr(module, "__file__", None)
    except Exception:  # noqa: BLE001 - not a file name we can read: not one that crashes
        return None


def stacks_would_crash(model: Any = None) -> bool:
    """Whether Paddle's per-op stacks could meet a file name that is not UTF-8: Paddle (3.3)
    formats every frame's file name as UTF-8 and crashes the process (SIGSEGV in
    GetPythonStack) on one that is not, as a script or module in a folder unzipped from a
    Windows archive with GBK names has. Looked for on the stack that enters trace(), in the
    loaded modules, the import path and the model's layers' forward code: any one, and trace()
    takes no per-op stacks (call sites are then the lines that called each layer)."""
    try:
        return _would_crash(sys._getframe(2), model)
    except Exception:  # noqa: BLE001 - the look must never stop trace(): as before it
        return False


def _would_crash(frame: FrameType | None, model: Any) -> bool:
    while frame is not None:
        if _not_utf8(frame.f_code.co_filename):
            return True
        frame = frame.f_back
    files = [_file_of(module) for module in list(sys.modules.values())]
    if any(_not_utf8(name) for name in [*files, *sys.path]):
        return True
    layers = [] if model is None else [model, *model.sublayers()]
    codes = (getattr(getattr(type(layer), "forward", None), "__code__", None) for layer in layers)
    return any(code is not None and _not_utf8(code.co_filename) for code in codes)
