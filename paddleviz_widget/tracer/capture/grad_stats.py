"""Statistics of the real gradients of one backward, edge by edge, computed where they live.

A post hook on each op GradNode (``node._register_post_hook``, Paddle >= 3.0) receives the
gradients the node sends, one per ``next_functions`` entry. The hook reduces each, on its
own device, to [norm, max_abs, abs_sum] (finite elements, in float64) and [zeros, nan, inf]
with a dozen tensor ops, and hands the gradients back untouched; when the backward has ended
the small results are copied to the host once per device: no gradient reaches the host. A
CPU gradient is read in place by NumPy instead (``cpu_reduce``): no copy, and single-pass
reductions where each Paddle op would allocate its result.
(What a node received is what its senders sent: no need to reduce it twice.)

A program node (paddle.jit.to_static) runs no post hook (Paddle 3.3.1): what it sends is read
by a gradient hook on each tensor it sends to (its inputs and parameters, as the forward gave
them), where that tensor's node gets its gradient from this program node alone; a gradient
summed with another sender's is not this edge's, and is left out.

Not hooked: accumulation nodes (Paddle refuses), PyLayer nodes (their gradients are the
user's Python), and node types whose backward sends a *list* of tensors through one slot
(concat, stack, ...): Paddle 3.3 cannot take such a hook's result back and would abort the
backward. Their edges get no statistics, and the graph says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import compress, repeat
from math import prod
from operator import itemgetter
from typing import Any

from ...graph.parts import GradInfo
from ..read.program_nodes import is_program_node
from ..read.tensor_info import cpu_only_build, dtype_name, place_name
from ..read.walk import ACCUMULATION_NODE, WalkedNode
from .cpu_reduce import CpuReader
from .edge_positions import EdgeSlots
from .hook_returns import HookResults
from .hooked_nodes import hookable
from .small_grads import LIMIT, SmallGrads, small_copy
from .sparse_grads import is_sparse, sparse_stats
from .stats_hook import hook_maker
from .stats_rows import HookLog
from .vlog import vlog_silenced

RAW_FIELDS = 7  # norm, max_abs, abs_sum, zeros, nan, inf, numel
_CPU = object()  # the place part of a CPU gradient's GradInfo key


@dataclass
class NodeRun:
    """One hooked node's run: its pointer, and per sent gradient (next_functions index) the
    row of its raw statistics in the stacked result (stats_rows.backward_stats takes these,
    or the hooks' own flat HookLog)."""

    ptr: int
    rows: dict[int, int] = field(default_factory=dict)
    complete: bool = True  # every gradient it sent was matched to its edge


def _reduce(paddle: Any, t: Any) -> tuple[Any, Any]:
    """(float64 [norm, max_abs, abs_sum], int64 [zeros, nan, non-finite]) of one gradient, on
    its device: sizes over the finite elements, a few cheap tensor ops, no host copy. The
    norm is taken on values scaled by their maximum, so squares cannot overflow. A complex
    gradient (a watched run's complex parameter) is reduced as its elements' moduli: cast to
    float32 it kept the real parts alone (a norm of 12.8 for 21.3)."""
    if t.dtype in (paddle.complex64, paddle.complex128):
        x = paddle.abs(t)  # float32 / float64 |g|, zero exactly where g is
    else:
        x = t if t.dtype in (paddle.float32, paddle.float64) else t.astype("float32")
    zero = paddle.zeros([], x.dtype)
    finite = paddle.isfinite(x)
    a = paddle.where(finite, x, zero).abs()
    top = a.max() if x.size > 0 else zero
    # Scaled by the same divisor the norm is multiplied back by (a largest |x| below 1e-30
    # was divided by 1e-30 but multiplied by itself: a 1e-35 gradient's norm 1e5 too small).
    scale = paddle.maximum(top, paddle.full([], 1e-30, x.dtype))
    scaled = paddle.square(a / scale).sum()
    top64 = top.astype("float64")
    sizes = paddle.stack([scale.astype("float64") * paddle.sqrt(scaled.astype("float64")), top64,
                          a.sum(dtype="float64")])  # fmt: skip
    counts = paddle.stack([(x == zero).sum(), paddle.isnan(x).sum(), (~finite).sum()])
    return sizes, counts


def _tensors(slots: Sequence[Any]) -> list[Any]:
    return [t for t in slots if t is not None and not isinstance(t, (list, tuple))]


class StatsCapture:
    """Hooks for one backward: ``arm(nodes)`` before it runs, ``collect()`` after, and
    ``disarm()`` always (hooks stay on the nodes otherwise, and a retained graph's next
    backward would run them again)."""

    def __init__(self) -> None:
        self._handles: list[Any] = []
        # rows reduced on their device: float64 [norm, max_abs, abs_sum] and int64 [zeros,
        # nan, non-finite] there, by row
        self._device: dict[int, tuple[Any, Any]] = {}
        self._numel: list[int] = []
        self._host_rows: dict[int, list[float]] = {}  # rows reduced on the CPU, already read
        # each run's node ptr in the order they ran, and each row's edge (stats_rows.HookLog)
        self.log = HookLog()
        self.runs = self.log.order
        self._program_runs: set[int] = set()  # program nodes whose run is in the log
        self.skipped: set[int] = set()  # ptrs of op nodes that could not be hooked
        self.output_rows: list[int] = []  # rows of the tensors backward starts from
        self._results = HookResults()  # what Paddle would keep of our hooks' results
        self._cpu = CpuReader()
        self._small = SmallGrads()
        # What the hooks saw of each gradient: (node ptr, next_functions index) -> its dtype,
        # shape and place as sent; node ptr -> what it received (only the nodes in _receivers,
        # and only when every gradient it received agrees). The hooks' annotation source.
        self.grads: dict[tuple[int, int], GradInfo] = {}
        self.received: dict[int, GradInfo] = {}
        self._receivers: frozenset[int] = frozenset()
        self._slots = EdgeSlots(None)
        self._infos: dict[tuple[int, tuple[int, ...], object], tuple[GradInfo, Any]] = {}
        # What the hook (stats_hook.py) asks on each call, asked once: the floating dtypes,
        # whether a tensor's address can be read, whether this Paddle is built for the CPU
        # alone.
        self._kinds = (_float_dtypes(), _addressable(), cpu_only_build())
        self._hook: Callable[[int, int, Any, Any], Any] | None = None  # stats_hook's, in arm()

    def arm(
        self, nodes: Iterable[Any], receivers: Callable[[int], list[Any] | None] | None = None,
        senders: Mapping[int, list[tuple[int, int]]] | None = None,
        received: frozenset[int] = frozenset(), walked: Sequence[WalkedNode] | None = None,
    ) -> None:  # fmt: skip
        """``receivers``: for a program node, the tensors it sends to (ProgramRuns.receivers);
        ``senders``: who sends to each node (stats_watch.senders_of); ``received``: the nodes
        whose received gradient is read too (received_of); ``walked``: the walk's record of
        ``nodes`` in the same order (their names, pointers and fan-outs, not asked again)."""
        self._receivers = received
        self._slots = EdgeSlots(senders)
        nodes = list(nodes)
        self._hook = hook_maker(self, LIMIT)
        self._results.held()  # the hooks' closure holds its list now
        if walked is None:
            walked = [WalkedNode(k, str(n.name()), int(n.node_ptr()), False, len(n.next_functions))
                      for k, n in enumerate(nodes)]  # fmt: skip
        # What to do with a node, by name (~8k nodes of a few dozen names a llama-10k step),
        # then the ~8k hooks made and registered by C loops (map), not a Python one
        names = list(map(_NAME, walked))
        kind_of = {name: _kind(name) for name in set(names)}
        kinds = list(map(kind_of.__getitem__, names))
        hooked = list(map(_HOOK.__eq__, kinds))
        targets = list(compress(nodes, hooked))
        hook_nodes = list(compress(walked, hooked))
        ptrs, fanouts = map(_PTR, hook_nodes), map(_FANOUT, hook_nodes)
        if type(self)._hook_for is _OWN_HOOK_FOR:  # (not a benchmark's wrapper)
            hooks: Iterable[Any] = map(partial, repeat(self._hook), ptrs, fanouts)
        else:
            hooks = map(self._hook_for, ptrs, fanouts)
        _each(targets, "_register_post_hook", hooks, into=self._handles)
        for node, kind, (_, _, ptr, _, _) in zip(nodes, kinds, walked):
            if kind == _PROGRAM:
                self._arm_program(node, ptr, receivers, {} if senders is None else senders)
            elif kind == _SKIPPED:
                self.skipped.add(ptr)

    def _arm_program(
        self, node: Any, ptr: int, receivers: Callable[[int], list[Any] | None] | None,
        senders: Mapping[int, list[tuple[int, int]]],
    ) -> None:  # fmt: skip
        tensors = receivers(ptr) if receivers is not None else None
        targets = node.next_functions
        if tensors is None or len(tensors) != len(targets):
            self.skipped.add(ptr)
            return
        for index, (tensor, target) in enumerate(zip(tensors, targets)):
            if tensor is None or target is None or tensor.stop_gradient:
                continue
            if senders.get(int(target.node_ptr())) != [(ptr, index)]:
                continue  # its gradient is summed with another sender's: not this edge's
            self._handles.append(tensor.register_hook(self._program_hook(ptr, index)))

    def _program_hook(self, ptr: int, index: int) -> Callable[[Any], None]:
        def hook(grad: Any) -> None:
            import paddle

            if ptr not in self._program_runs:
                self._program_runs.add(ptr)
                self.runs.append(ptr)
            if _usable(paddle, grad):
                self.grads[(ptr, index)] = self._info(grad.place, grad.dtype, tuple(grad.shape))
                with paddle.no_grad(), vlog_silenced():
                    self._add(paddle, grad, key=(ptr, index))

        return hook

    def observe_outputs(self, tensors: Iterable[Any]) -> None:
        """Reduce the tensors backward starts from (the loss): NaN/Inf there means the
        forward made it, before any gradient did."""
        import paddle

        with paddle.no_grad():
            self.output_rows += [self._add(paddle, t) for t in tensors if _usable(paddle, t)]

    def _hook_for(self, ptr: int, edges: int) -> Any:
        """The post hook of the node at ``ptr`` with ``edges`` next_functions (arm() makes
        them the same way, in C; benchmarks/capture_parts.py wraps this one)."""
        assert self._hook is not None, "arm() makes the hooks"
        return partial(self._hook, ptr, edges)

    def _rest(self, t: Any, key: tuple[int, int], dtype: Any, shape: tuple[int, ...],
              cpu: bool) -> None:  # fmt: skip
        """A gradient the hook does not copy by its address: a floating one is reduced
        (sparse_grads.py, small_copy or in place on the CPU, tensor ops elsewhere)."""
        f32, f16, bf16, f64 = floats = self._kinds[0]
        # Paddle's dtypes are singletons: `is` first (hashing one costs ~1 us)
        if dtype is f32 or dtype is f16 or dtype is bf16 or dtype is f64 or dtype in floats:
            import paddle

            if not t.is_dense() and is_sparse(t):  # (~0.1 us) sparse_grads.py
                got = sparse_stats(paddle, t)  # None: COO/CSR, no statistics
                if got is not None:
                    self._host_rows[len(self._numel)], numel = got
                    self._numel.append(numel)
                    self.log.keys.append(key)
                return
            self._add(paddle, t, dtype, shape, cpu, key)

    def _receive(self, ptr: int, grad_inputs: Sequence[Any]) -> None:
        cpu_only = cpu_only_build()
        infos = {
            self._info(None if cpu_only else t.place, t.dtype, tuple(t.shape))
            for t in grad_inputs
            if _initialized(t)
        }
        if len(infos) == 1:
            self.received[ptr] = infos.pop()

    def _info(
        self, place: Any, dtype: Any, shape: tuple[int, ...], cpu: bool | None = None
    ) -> GradInfo:
        """dtype, shape and place of a gradient, one GradInfo per distinct value. Every CPU
        place reads the same: it is keyed without str(place) (~1 us a gradient)."""
        if cpu is None:  # (place None: a Paddle built for the CPU alone)
            cpu = place is None or place.is_cpu_place()
        # Keyed by the dtype's id, not its hash (~1 us): the dtype is kept with the info, so
        # that id stays its own. (The hook keeps its own, by shape, for CPU float32 ones.)
        key = (id(dtype), shape, _CPU if cpu else str(place))
        known = self._infos.get(key)
        if known is None:
            where = "cpu" if place is None else place_name(str(place))
            info = GradInfo(dtype_name(dtype), tuple(int(d) for d in shape), where)
            known = self._infos[key] = (info, dtype)
        return known[0]

    def _add(
        self, paddle: Any, t: Any, dtype: Any = None, shape: tuple[int, ...] | None = None,
        cpu: bool | None = None, key: tuple[int, int] | None = None,
    ) -> int:  # fmt: skip
        """Reduce ``t`` into a new row (of edge ``key``; None: the tensors backward starts
        from)."""
        shape = tuple(t.shape) if shape is None else shape
        cpu = t.place.is_cpu_place() if cpu is None else cpu
        numel = prod(shape)  # from the shape: no device trip
        row = len(self._numel)
        self._numel.append(numel)
        self.log.keys.append(key)
        copy = small_copy(paddle, t, numel, dtype, cpu) if numel > 0 else None
        if copy is not None:  # reduced with the others after the backward: no op now
            self._small.add(row, copy)
            return row
        with paddle.no_grad(), vlog_silenced():  # our ops' log lines are not the user's
            host = self._cpu.read(paddle, t) if numel > 0 and cpu else None
            if host is not None:
                self._host_rows[row] = host
            else:
                self._device[row] = _reduce(paddle, t)
        return row

    def collect(self) -> Any:
        """All rows as one host array (rows x RAW_FIELDS), or None if nothing was reduced."""
        if not self._numel:
            return None
        import numpy as np
        import paddle

        out = np.zeros((len(self._numel), RAW_FIELDS))
        out[:, 6] = self._numel
        by_place: dict[str, list[int]] = {}
        for k, row in self._host_rows.items():
            out[k, :6] = row
        self._small.fill(out)
        device = self._device
        for k, (sizes, _) in device.items():  # rows in ascending order
            by_place.setdefault(str(sizes.place), []).append(k)
        with paddle.no_grad():
            for rows in by_place.values():  # one copy to the host per device
                both = paddle.concat(
                    [
                        paddle.stack([device[k][0] for k in rows]),
                        paddle.stack([device[k][1] for k in rows]).astype("float64"),
                    ],
                    axis=1,
                )
                out[rows, :6] = both.numpy()
        out[:, 5] -= out[:, 4]  # non-finite - NaN = Inf
        return out

    def disarm(self) -> None:
        _each(self._handles, "remove", into=[])  # (~8k: by a C loop)
        self._handles.clear()
        # (while the hook, which holds its list, is still held; each post hook call, a run not
        # a program node's, returned it once)
        self._results.release(len(self.runs) - len(self._program_runs))
        # The hook holds this capture's methods and it holds the hook: a cycle that left the
        # capture (~30k objects on llama-10k) to the collector, ~10 ms a captured step.
        self._hook = None
        self._cpu.release()


_OWN_HOOK_FOR = StatsCapture._hook_for  # benchmarks/capture_parts.py replaces it, timed
_HOOK, _PROGRAM, _SKIPPED, _LEAF = range(4)
_NAME, _PTR, _FANOUT = itemgetter(1), itemgetter(2), itemgetter(4)  # WalkedNode's fields


def _each(objects: list[Any], method: str, *args: Iterable[Any], into: list[Any]) -> None:
    """``o.method(*a)`` for ``o, *a`` in ``zip(objects, *args)``, each result appended to
    ``into`` as it comes (a hook registered before an error is in the capture's handles, and
    removed by disarm()); looped in C when the objects are of one type (Paddle's GradNodes and
    hook handles are: its method taken from the class)."""
    kinds = set(map(type, objects))
    if len(kinds) == 1:
        into.extend(map(getattr(kinds.pop(), method), objects, *args))
    else:
        for o, *a in zip(objects, *args):
            into.append(getattr(o, method)(*a))


def _kind(name: str) -> int:
    """What arm() does with a node of this name: hook it, read it as a program node, count it
    as skipped (an op node that cannot be hooked), or leave it (an accumulation node)."""
    if is_program_node(name):
        return _PROGRAM
    if hookable(name):
        return _HOOK
    return _LEAF if name == ACCUMULATION_NODE else _SKIPPED


def _initialized(t: Any) -> bool:
    return t is not None and not isinstance(t, (list, tuple)) and bool(t._is_initialized())


def _usable(paddle: Any, t: Any) -> bool:
    return _initialized(t) and _floating(paddle, t)


@cache
def _float_dtypes() -> tuple[Any, Any, Any, Any]:
    import paddle

    return (paddle.float32, paddle.float16, paddle.bfloat16, paddle.float64)


@cache
def _addressable() -> bool:
    """Tensor.data_ptr/is_contiguous/is_dense/strides exist (Paddle 3.x); else gradients are
    copied through numpy() (an AttributeError in a hook would stop the user's backward)."""
    import paddle

    names = ("data_ptr", "is_contiguous", "is_dense", "strides")
    return all(hasattr(paddle.Tensor, n) for n in names)


def _floating(paddle: Any, t: Any) -> bool:
    """Tensor.is_floating_point() without its argument checks (~4x the cost, per gradient)."""
    return t.dtype in (paddle.float32, paddle.float16, paddle.bfloat16, paddle.float64)
