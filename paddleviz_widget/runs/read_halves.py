"""A big model's gradients read by two threads at once (compiled_read.py's read_part).

Reading gradients is bound by memory, and after Paddle's backward both cores are idle: for
ResNet-50's 100 MB of gradients one thread reads at ~19 GB/s (5.4 ms), two at ~29 GB/s (3.5
ms; benchmarks/RESULTS.md). The parameters are cut in two runs of about equal bytes; the
second is read by the helper thread (helper_thread.py) while the caller reads the first, both
without the GIL.
"""

from __future__ import annotations

from typing import Any

from .helper_thread import HelperThread

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

    def __init__(self, read_part: Any, n: int, cut: int, helper: HelperThread | None = None):
        self._part = read_part  # a ctypes CFUNCTYPE: runs without the GIL
        self._n = n
        self._cut = cut
        self._helper = helper if helper is not None else HelperThread()

    def read(self, args: tuple[int, ...]) -> None:
        part, cut = self._part, self._cut
        self._helper.both(lambda: part(*args, 0, cut), lambda: part(*args, cut, self._n))
