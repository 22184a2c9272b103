"""The per-step summary's second thread: half of a big model's gradients read there while the
training thread reads the other half (after Paddle's backward both cores are idle; NumPy's
reductions and the compiled read_part run without the GIL)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class HelperThread:
    """``both(mine, theirs)``: theirs() on the helper thread while mine() runs on the caller's,
    both results once both are done. Started at its first use; a fork's child starts its own
    (it has no thread of its parent's); where no thread can start (the interpreter is
    exiting) the caller runs theirs() too."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0  # the process that started the thread

    def both(self, mine: Callable[[], Any], theirs: Callable[[], Any]) -> tuple[Any, Any]:
        future = self._submit(theirs)
        try:
            got = mine()
        finally:
            if future is not None:
                other = _settle(future)
        if future is None:
            other = theirs()
        return got, other

    def _submit(self, work: Callable[[], Any]) -> Future[Any] | None:
        pid = os.getpid()
        if self._pool is None or self._pid != pid:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="pvw-run-summary")
            self._pid = pid
        try:
            return self._pool.submit(work)
        except RuntimeError:  # shut down, or new threads refused at exit
            return None

    def release(self) -> None:
        """Let the thread go (the run ended)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _settle(theirs: Future[Any]) -> Any:
    """Its result once the helper is done, even through a KeyboardInterrupt (raised then): it
    reads the step's gradients, which the user's handler may free as soon as it runs."""
    pending: BaseException | None = None
    while True:
        try:
            got = theirs.result()
        except BaseException as error:
            if theirs.done():
                raise
            pending = error  # a signal's exception while waiting: raised once it is read
            continue
        break
    if pending is not None:
        raise pending
    return got
