"""Statistics of the real gradients of one backward, edge by edge, computed where they live.

A post hook on each op GradNode (``node._register_post_hook``, Paddle >= 3.0) receives the
gradients the node sends, one per ``next_functions`` entry, and the ones it received. The
hook reduces each to [norm, max_abs, mean_abs, zeros, nan, inf, numel] with a few tensor
ops on the gradient's own device (float32 or wider, so float16/bfloat16 don't overflow),
keeps the small result tensor, and hands the gradients back untouched. When the backward
has ended, everything is stacked and copied to the host once: no gradient is copied whole.

Not hooked: accumulation nodes (Paddle refuses), PyLayer nodes (their gradients are the
user's Python), and node types whose backward sends a *list* of tensors through one slot
(concat, stack, ...): Paddle 3.3 cannot take such a hook's result back and would abort the
backward. Their edges get no statistics, and the graph says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

from ..read.replay_safety import is_pylayer
from ..read.walk import ACCUMULATION_NODE

# GradNode types whose backward returns a list of tensors in one slot (from Paddle's grad
# kernels with a std::vector<DenseTensor*> output); a post hook there aborts the backward.
LIST_SLOT_NODES = (
    "ConcatGradNode",
    "StackGradNode",
    "AddNGradNode",
    "SumGradNodeList",
    "MeshgridGradNode",
    "EinsumGradNode",
    "BroadcastTensorsGradNode",
    "MultiDotGradNode",
    "MultiplexGradNode",
    "RnnGradNode",
    "CudnnLstmGradNode",
    "FusedSeqpoolCvmGradNode",
    "PartialConcatGradNode",
    "PartialSumGradNode",
    "CoalesceTensorGradNode",
)
RAW_FIELDS = 7  # norm, max_abs, abs_sum, zeros, nan, inf, numel


def hookable(name: str) -> bool:
    if name == ACCUMULATION_NODE or is_pylayer(name):
        return False
    return not any(name.startswith(prefix) for prefix in LIST_SLOT_NODES)


@dataclass
class NodeRun:
    """One hooked node's run: its pointer, and per sent gradient (next_functions index) the
    row of its raw statistics in the stacked result."""

    ptr: int
    rows: dict[int, int] = field(default_factory=dict)
    received_row: int | None = None  # nan+inf of what it received, summed


def _reduce(paddle: Any, t: Any) -> Any:
    """The raw statistics of one gradient tensor, as a float64 tensor on its device."""
    size = prod(int(d) for d in t.shape)  # from the shape: no device round trip
    x = t if t.dtype in (paddle.float32, paddle.float64) else t.astype("float32")
    finite = paddle.isfinite(x)
    nan = paddle.isnan(x).astype("float64").sum()
    bad = (~finite).astype("float64").sum()
    a = paddle.where(finite, x, paddle.zeros_like(x)).abs()
    parts = [
        paddle.sqrt((a * a).sum()),
        a.max() if size > 0 else paddle.zeros([], a.dtype),
        a.sum(),
        (x == 0).astype("float64").sum(),
    ]
    numel = paddle.full([], float(size), "float64")
    return paddle.stack([*(p.astype("float64") for p in parts), nan, bad - nan, numel])


def _tensors(slots: Sequence[Any]) -> list[Any]:
    return [t for t in slots if t is not None and not isinstance(t, (list, tuple))]


class StatsCapture:
    """Hooks for one backward: ``arm(nodes)`` before it runs, ``collect()`` after, and
    ``disarm()`` always (hooks stay on the nodes otherwise, and a retained graph's next
    backward would run them again)."""

    def __init__(self) -> None:
        self._handles: list[Any] = []
        self._rows: list[Any] = []  # small float64 tensors, one per reduced gradient
        self.runs: list[NodeRun] = []  # in the order the nodes ran
        self.skipped: set[int] = set()  # ptrs of op nodes that could not be hooked
        self.output_rows: list[int] = []  # rows of the tensors backward starts from

    def arm(self, nodes: Iterable[Any]) -> None:
        for node in nodes:
            name = str(node.name())
            ptr = int(node.node_ptr())
            if not hookable(name):
                if name != ACCUMULATION_NODE:
                    self.skipped.add(ptr)
                continue
            self._handles.append(node._register_post_hook(self._hook_for(ptr)))

    def observe_outputs(self, tensors: Iterable[Any]) -> None:
        """Reduce the tensors backward starts from (the loss): NaN/Inf there means the
        forward made it, before any gradient did."""
        import paddle

        with paddle.no_grad():
            for t in tensors:
                if _usable(paddle, t):
                    self.output_rows.append(len(self._rows))
                    self._rows.append(_reduce(paddle, t))

    def _hook_for(self, ptr: int) -> Any:
        def hook(grad_outputs: Any, grad_inputs: Any) -> Any:
            self._record(ptr, grad_outputs, grad_inputs)
            return grad_outputs

        return hook

    def _record(self, ptr: int, grad_outputs: Sequence[Any], grad_inputs: Sequence[Any]) -> None:
        import paddle

        run = NodeRun(ptr)
        with paddle.no_grad():
            for index, t in enumerate(grad_outputs):
                # An edge that needs no gradient gets an uninitialized tensor: touching it
                # would crash, so only initialized floating tensors are reduced.
                if _usable(paddle, t):
                    run.rows[index] = len(self._rows)
                    self._rows.append(_reduce(paddle, t))
            received = [_reduce(paddle, t) for t in _tensors(grad_inputs) if _usable(paddle, t)]
            if received:
                run.received_row = len(self._rows)
                self._rows.append(paddle.stack(received).sum(axis=0))
        self.runs.append(run)

    def collect(self) -> Any:
        """All rows as one host array (rows x RAW_FIELDS), or None if nothing was reduced."""
        if not self._rows:
            return None
        import numpy as np
        import paddle

        by_place: dict[str, list[int]] = {}
        for k, row in enumerate(self._rows):
            by_place.setdefault(str(row.place), []).append(k)
        out = np.zeros((len(self._rows), RAW_FIELDS))
        with paddle.no_grad():
            for rows in by_place.values():  # one copy to the host per device
                out[rows] = paddle.stack([self._rows[k] for k in rows]).numpy()
        return out

    def disarm(self) -> None:
        while self._handles:
            self._handles.pop().remove()


def _usable(paddle: Any, t: Any) -> bool:
    if t is None or isinstance(t, (list, tuple)) or not t._is_initialized():
        return False
    return bool(t.is_floating_point())
