"""hook_grads.hooks_layer on plain data, and small_grads.SmallGrads against NumPy in float64:
the parts of the hooks' annotation source that real models rarely reach (an edge no hook saw,
NaN/Inf and zeros in many small gradients at once)."""

from __future__ import annotations

import numpy as np
import pytest

from paddleviz_widget.graph.parts import GradInfo
from paddleviz_widget.tracer.capture.small_grads import SmallGrads
from paddleviz_widget.tracer.capture.stats_rows import BackwardStats
from paddleviz_widget.tracer.merge.hook_grads import hooks_layer
from paddleviz_widget.tracer.read.walk import WalkedEdge, WalkedNode, WalkResult

# n0 (Mul) -> n1 (Concat) -> n2 (Tanh); n0 -> n3 (param); n1 -> n4 (Exp), which saw nothing
WALK = WalkResult(
    nodes=(
        WalkedNode(0, "MultiplyGradNode", 100, True, 2),
        WalkedNode(1, "ConcatGradNode", 101, False, 2),
        WalkedNode(2, "TanhGradNode", 102, False, 1),
        WalkedNode(3, "GradNodeAccumulation", 103, False, 0),
        WalkedNode(4, "ExpGradNode", 104, False, 1),
    ),
    edges=(WalkedEdge(0, 1, 0), WalkedEdge(0, 3, 1), WalkedEdge(1, 2, 0), WalkedEdge(1, 4, 1)),
    root_indices=(0,),
)
SENT = GradInfo("float32", (2, 8), "cpu")
GOT = GradInfo("float32", (2, 4), "cpu")


def _stats() -> BackwardStats:
    stats = BackwardStats()
    stats.grads = {(100, 0): SENT}  # n0 -> n1 as sent; n0 -> n3 not seen (into a parameter)
    stats.received = {102: GOT}  # what n2 received: the concat's edge n1 -> n2
    return stats


def test_sent_then_received_and_the_rest_bare_with_one_line() -> None:
    layer = hooks_layer(_stats(), WALK, instead_of_dump=True)
    assert {k: (n.grad, n.src) for k, n in layer.edges.items()} == {
        (100, 0): (SENT, "h"),
        (101, 0): (GOT, "h"),
    }
    # n1 -> n4 is bare and said; n0 -> n3 ends at a parameter, whose own shape names it
    assert len(layer.notes) == 1 and layer.notes[0].startswith("1 edge(s) have no gradient")


def test_no_line_when_paddles_dump_was_written_too() -> None:
    assert hooks_layer(_stats(), WALK, instead_of_dump=False).notes == []


def _expected(a: np.ndarray) -> list[float]:
    x = a.astype(np.float64)
    finite = np.isfinite(x)
    b = np.abs(x[finite])
    top = b.max() if b.size else 0.0
    return [np.sqrt((b * b).sum()), top, b.sum(), float((b == 0).sum()),
            float(np.isnan(x).sum()), float((~finite).sum())]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_small_gradients_reduced_together_equal_numpy(dtype) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(int(rng.integers(1, 400))).astype(dtype) for _ in range(300)]
    arrays[3][:5] = np.nan
    arrays[4][1] = -np.inf
    arrays[5][:] = 0
    arrays[6][2:4] = 0
    arrays.append(np.array([np.nan, np.inf], dtype))  # nothing finite at all
    small, out = SmallGrads(), np.zeros((len(arrays), 7))
    for row, a in enumerate(arrays):
        small.add(row, a.copy())
    small.fill(out)
    for row, a in enumerate(arrays):
        np.testing.assert_allclose(out[row, :6], _expected(a), rtol=2e-6, err_msg=str(row))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_small_gradients_of_one_size_reduced_in_blocks_equal_numpy(dtype) -> None:
    # 50 gradients of 3000 elements: stacked 21 to a block (3 blocks), mixed with odd sizes
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(3000).astype(dtype) * 10.0 ** (k % 7 - 3) for k in range(50)]
    arrays[0][:7] = np.nan
    arrays[21][5] = np.inf  # the second block's first row
    arrays[22][:] = 0
    arrays[49][10:20] = 0
    arrays[30][:] = np.nan
    arrays += [rng.standard_normal(int(n)).astype(dtype) for n in (1, 17, 4096)]
    rows = rng.permutation(len(arrays))  # rows not in the order the gradients came
    small, out = SmallGrads(), np.zeros((len(arrays), 7))
    for row, a in zip(rows, arrays):
        small.add(int(row), a.copy())
    small.fill(out)
    for row, a in zip(rows, arrays):
        np.testing.assert_allclose(out[row, :6], _expected(a), rtol=2e-6, err_msg=str(row))


def test_strided_small_gradients_are_gathered_in_c_order_into_their_rows(monkeypatch) -> None:
    """SmallGrads.add_strided copies the memory a strided view spans and gathers its values
    after, into the lane slot reserved at its row: each row holds exactly the view's values
    in C order (what ``numpy()`` of it gives), between plainly added gradients of the same
    size, across blocks; a view spanning far more memory than its values is refused."""
    from paddleviz_widget.tracer.capture import small_grads

    monkeypatch.setattr(small_grads, "BLOCK", 1024)  # blocks of 2-4 rows: many, and grown
    rng = np.random.default_rng(3)
    base = rng.standard_normal((2, 8, 4, 8)).astype(np.float32)  # 512 elements
    views = [
        base.transpose(0, 2, 1, 3),  # a permutation: spans its own 512 values
        base[1].transpose(2, 0, 1),  # 256 values at an offset
        base[:, :, 1:3].transpose(1, 0, 2, 3),  # gaps between rows: spans 496 for 256
        np.broadcast_to(base[0, 0, 0], (4, 8)),  # stride 0: 32 values over 8 elements
    ]
    small, kept = SmallGrads(), {}
    row = 0
    for k in range(40):
        view = views[k % len(views)]
        if k % 3 == 0:
            plain = rng.standard_normal(view.size).astype(np.float32)
            small.add(row, plain)
            kept[row] = plain
            row += 1
        strides = [s // 4 for s in view.strides]
        assert small.add_strided(row, view.ctypes.data, view.shape, strides, view.size)
        kept[row] = np.ascontiguousarray(view).reshape(-1)
        row += 1
    sparse = base.reshape(-1)[::64]  # 8 values spanning 449
    assert not small.add_strided(row, sparse.ctypes.data, sparse.shape, [64], sparse.size)
    small._gather()
    got = {
        r: values for lane in small._lanes.values() for r, values in zip(lane.rows, lane.views())
    }
    assert sorted(got) == sorted(kept)
    for r, values in kept.items():
        assert np.array_equal(got[r], values), r
