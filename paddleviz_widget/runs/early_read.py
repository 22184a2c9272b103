"""A big model's gradients read while its backward still runs (steps between full captures).

Paddle's CPU backward keeps one core busy and leaves the other idle, and a parameter's
gradient is final for this backward once its accumulation node has run: Paddle then calls the
parameter's reduce hooks (``Tensor._register_backward_hook``, what DataParallel all-reduces
from). The hook here hands the gradient's address to a helper thread, which reads it with
read_part (no GIL) while the backward goes on, so ResNet-50's 100 MB are read on the idle core
instead of after the backward (~3-5 ms a step, memory-bound: benchmarks/RESULTS.md). A
parameter accumulated twice in one backward (a tied weight inside and outside a reentrant
recompute block) is read again after its second accumulation: reads run in hook order.

After the backward, ``drain()`` waits for the helper (always: the user's code may free the
gradients next) and the step checks every parameter's gradient address again (compiled_read's
``addresses``): a parameter read at the address it has now is done, any other is read then.

Paddle gives no way to remove a reduce hook: a parameter keeps one hook of ours for the
process's life, inert outside a run (a call that returns at once), reused by later runs. Not
used where the gradients change after their reduce hooks (DataParallel's all-reduce) or
where Paddle has no such hook.
"""

from __future__ import annotations

import os
import queue
import threading
import weakref
from typing import Any

# id(param) -> (the parameter, weakly; its slot): one hook per parameter per process
_SLOTS: dict[int, tuple[weakref.ref[Any], _Slot]] = {}


class _Slot:
    """What a parameter's hook calls: the run reading early (None: none) and its index."""

    __slots__ = ("target", "index", "__weakref__")

    def __init__(self) -> None:
        self.target: EarlyRead | None = None
        self.index = -1

    def fire(self) -> None:
        target = self.target
        if target is not None and target.armed:
            target.arrived(self.index)


def _slot_of(param: Any) -> _Slot | None:
    held = _SLOTS.get(id(param))
    if held is not None and held[0]() is param:
        return held[1]
    slot = _Slot()
    try:
        ref = weakref.ref(param)
        param._register_backward_hook(slot.fire)
    except Exception:  # noqa: BLE001 (no such hook, not a leaf: read after the backward)
        return None
    if len(_SLOTS) > 4096:  # forget the slots of parameters that are gone
        for key in [k for k, (r, _) in _SLOTS.items() if r() is None]:
            del _SLOTS[key]
    _SLOTS[id(param)] = (ref, slot)
    return slot


class EarlyRead:
    """``arm()`` before a backward, ``drain()`` after it (in a finally): ``sent`` then maps
    each parameter read during it to the address read."""

    def __init__(self, params: list[Any], read: Any, read_part: Any) -> None:
        self._params = params
        self._read = read  # the CompiledRead whose arrays the helper fills (addrs, out, flags)
        self._part = read_part  # a ctypes CFUNCTYPE: runs without the GIL
        self.armed = False
        self.sent: dict[int, int] = {}
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._slots: list[_Slot] = []
        for i, p in enumerate(params):
            slot = _slot_of(p)
            if slot is None:
                self.release()
                raise ValueError("a parameter takes no reduce hook")
            slot.target, slot.index = self, i
            self._slots.append(slot)

    def arm(self) -> None:
        if self._thread is None or self._pid != os.getpid():  # (a fork's child: its own)
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._work, name="pvw-run-early", daemon=True)
            self._pid = os.getpid()
            self._thread.start()
        self.sent = {}
        self.armed = True

    def arrived(self, i: int) -> None:
        """Parameter i's reduce hook (in Paddle's backward, on its thread, the GIL held)."""
        try:
            g = self._params[i].grad
            ptr = g.data_ptr() if g is not None else 0
            if not ptr or not self._read.readable(i, g, ptr):
                return  # read after the backward
        except Exception:  # noqa: BLE001 (a hook must never break the user's backward)
            return
        self.sent[i] = ptr
        self._queue.put((i, ptr))

    def drain(self) -> None:
        """Back once every read handed over is done (a KeyboardInterrupt meanwhile is raised
        after: the reads are of gradients the user's handler may free)."""
        if not self.armed:
            return
        self.armed = False
        if not self.sent:
            return
        done = threading.Event()
        self._queue.put(done)
        pending: BaseException | None = None
        while not done.is_set():
            try:
                done.wait()
            except BaseException as error:  # noqa: BLE001 (raised once the reads are done)
                pending = error
        if pending is not None:
            raise pending

    def _work(self) -> None:
        args = self._read.part_args()
        addrs, part = self._read.addrs, self._part
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            i, ptr = item
            addrs[i] = ptr
            part(*args, i, i + 1)

    def release(self) -> None:
        """The run ended: the hooks go inert, the helper thread ends."""
        self.armed = False
        for slot in self._slots:
            if slot.target is self:
                slot.target = None
        self._slots = []
        if self._thread is not None and self._pid == os.getpid():
            self._queue.put(None)
            self._thread.join(timeout=5)  # (drained: it has only the None to take)
        self._thread = None
