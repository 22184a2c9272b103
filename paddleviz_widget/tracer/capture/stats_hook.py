"""The statistics hook itself: what runs inside Paddle's backward for each hooked GradNode.

Each call runs cold (between two of Paddle's kernels: ~1-2 us a Paddle read, ~10 us a NumPy
array), ~8k calls and ~11k gradients a llama-10k backward. So the hook is one function, with
what it uses held in its closure, and no object per call: it logs the run's pointer and, per
gradient, its edge (``HookLog``) and its dtype/shape/place (``grads``). The common gradient (a
small dense contiguous CPU float32 one) costs six Paddle reads and one memmove into its size's
lane (small_grads.py); every other goes to ``StatsCapture._rest``. All hooks of a backward
return one list (hook_returns.py).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .grad_stats import StatsCapture


def hook_maker(cap: StatsCapture, limit: int) -> Callable[[int, int, Any, Any], Any]:
    """``hook(ptr, edges, grad_outputs, grad_inputs)``: one function for every node, bound to
    each node's ptr and fan-out (its next_functions) by a ``partial`` (StatsCapture.arm): a
    closure per node would copy its ~25 free variables' cells, ~8k times. ``limit``: the most
    elements a gradient copied by its address has (small_grads.LIMIT)."""
    import paddle

    from . import small_grads

    log, numels, grads = cap.log, cap._numel, cap.grads
    order, keys, incomplete = log.order, log.keys, log.incomplete
    lanes, lane_of, memmove = cap._small._lanes, small_grads._Lane, small_grads._memmove
    strided = cap._small.add_strided
    info, rest, slots = cap._info, cap._rest, cap._slots
    receivers, receive = cap._receivers, cap._receive
    floats, by_address, cpu_only = cap._kinds
    f32 = floats[0]
    tensor = paddle.Tensor
    f32_cpu: dict[tuple[int, ...], Any] = {}  # shape -> GradInfo of a CPU float32 gradient
    result = cap._results.result  # the list every call returns (None: Paddle does not leak)

    def hook(ptr: int, edges: int, grad_outputs: Any, grad_inputs: Any) -> Any:
        if True:  # (indented as the closure it replaces)
            order.append(ptr)
            # An edge that needs no gradient gets an uninitialized tensor: touching it would
            # crash, so only initialized floating tensors are reduced (checked in the loop;
            # the whole list is asked for only when the gradients are more than the edges).
            if len(grad_outputs) == edges:
                positions: Any = range(edges)
            else:
                ready = [t is not None and not isinstance(t, (list, tuple))
                         and bool(t._is_initialized()) for t in grad_outputs]  # fmt: skip
                positions = slots.positions(ptr, ready, edges)
            for t, index in zip(grad_outputs, positions):
                if type(t) is not tensor and (t is None or isinstance(t, (list, tuple))):
                    continue
                if not t._is_initialized():
                    continue
                if index is None:
                    incomplete.append(ptr)  # a gradient whose edge is not known
                    continue
                key = (ptr, index)
                # Each attribute read is a C++ call: read once (the place not at all on a
                # Paddle built for the CPU alone).
                dtype, shape = t.dtype, tuple(t.shape)
                place = None if cpu_only else t.place
                cpu = place is None or place.is_cpu_place()
                if dtype is not f32 or not cpu:
                    grads[key] = info(place, dtype, shape, cpu)
                    rest(t, key, dtype, shape, cpu)
                    continue
                known = f32_cpu.get(shape)
                if known is None:
                    known = f32_cpu[shape] = info(place, dtype, shape, True)
                grads[key] = known
                numel = prod(shape)
                if not by_address or not 0 < numel <= limit:
                    rest(t, key, dtype, shape, True)
                    continue
                if not t.is_contiguous():  # (a transpose's gradient) small_grads.add_strided
                    address = t.is_dense() and t.data_ptr()
                    if address and strided(len(numels), address, shape, t.strides, numel):
                        numels.append(numel)
                        keys.append(key)
                        continue
                # small, dense, contiguous: copied from its address (SmallGrads.add, inline)
                elif t.is_dense():
                    address = t.data_ptr()
                    if address:
                        row = len(numels)
                        numels.append(numel)
                        keys.append(key)
                        lane = lanes.get(numel)
                        if lane is None:
                            lane = lanes[numel] = lane_of(numel)
                        used = lane.used
                        if used < lane.cap:  # _Lane.room's common case, written out
                            lane.used = used + 1
                            lane.rows.append(row)
                            at = used * numel
                        else:
                            at = lane.room(row)
                        memmove(lane.base + 4 * at, address, 4 * numel)
                        continue
                rest(t, key, dtype, shape, True)
            if ptr in receivers:
                receive(ptr, grad_inputs)
            if result is None:
                return grad_outputs
            result[:] = grad_outputs
            return result

    return hook
