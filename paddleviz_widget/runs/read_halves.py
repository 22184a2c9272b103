"""A big model's gradients read by two threads at once (compiled_read.py's read_part).

Reading gradients is bound by memory, and after Paddle's backward both cores are idle: for
ResNet-50's 100 MB of gradients one thread reads at ~19 GB/s (5.4 ms), two at ~29 GB/s (3.5
ms; benchmarks/RESULTS.md). The parameters are cut in two runs of about equal bytes; the
second is read by a helper thread while the caller reads the first, both without the GIL.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# Gradients of all parameters from this many elements (4 MB of float32) on are read by two
# threads: a hand-over to the helper costs ~50 us, a thread reads 4 MB in ~0.2 ms.
SPLIT_FROM = 1 << 20


def cut_at(sizes: list[int]) -> int:
    """Where the parameters are cut (0 < cut < n: both halves read something), the bytes
    of the two halves as even as parameter boundaries allow; 0: read by one thread."""
    total = sum(sizes)
    if len(sizes) < 2 or total < SPLIT_FROM:
        return 0
    best, best_gap, before = 0, total, 0
    for k, size in enumerate(sizes[:-1], start=1):
        before += size
        gap = abs(total - 2 * before)
        if gap < best_gap:
            best, best_gap = k, gap
    return best


class ReadHalves:
    """``read(args)``: read_part over parameters [cut, n) on the helper thread and [0, cut) on
    the caller's, back when both are read (their flags in the kernel's array)."""

    def __init__(self, read_part: Any, n: int, cut: int) -> None:
        self._part = read_part  # a ctypes CFUNCTYPE: runs without the GIL
        self._n = n
        self._cut = cut
        self._helper: ThreadPoolExecutor | None = None
        self._pid = 0  # the process that started the helper (a fork's child has no thread)

    def read(self, args: tuple[int, ...]) -> None:
        theirs = self._submit(args)
        try:
            self._part(*args, 0, self._cut)
        finally:
            if theirs is not None:
                _settle(theirs)
        if theirs is None:  # no helper thread (the interpreter is exiting): this one reads
            self._part(*args, self._cut, self._n)

    def _submit(self, args: tuple[int, ...]) -> Future[Any] | None:
        pid = os.getpid()
        if self._helper is None or self._pid != pid:
            self._helper = ThreadPoolExecutor(1, thread_name_prefix="pvw-run-summary")
            self._pid = pid
        try:
            return self._helper.submit(self._part, *(*args, self._cut, self._n))
        except RuntimeError:  # shut down, or new threads refused at exit
            return None

    def release(self) -> None:
        """Let the helper thread go (the run ended)."""
        if self._helper is not None:
            self._helper.shutdown()
            self._helper = None


def _settle(theirs: Future[Any]) -> None:
    """Back once the helper's half is read, even through a KeyboardInterrupt (raised then):
    it reads the step's gradients, which the user's handler may free as soon as it runs."""
    pending: BaseException | None = None
    while True:
        try:
            theirs.result()
        except BaseException as error:
            if theirs.done():
                raise
            pending = error  # a signal's exception while waiting: raised once it is read
            continue
        break
    if pending is not None:
        raise pending
