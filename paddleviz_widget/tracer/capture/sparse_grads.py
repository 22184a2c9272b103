"""Sparse gradients. A SelectedRows (nn.Embedding(sparse=True)'s) is read in the terms of the
dense gradient it stands for: its value holds one row per looked-up id, an id looked up k
times in k rows, and the optimizer applies their sum (the other rows are zero), so the value's
own norm, max |g| and NaN/Inf counts are not the parameter's gradient's, and Paddle's
element-wise ops refuse it. A sparse COO/CSR one (paddle.sparse) gets no statistics, and a
sparse layer output no NaN/Inf check (forward_finite.py): its Tensor.numpy() inside a hook
makes Paddle 3.3.1 crash (SIGSEGV) after it."""

from __future__ import annotations

from typing import Any

import numpy as np

from .vlog import vlog_silenced


def merged_rows(paddle: Any, g: Any) -> np.ndarray:
    """The non-zero rows of the dense gradient of SelectedRows ``g``, flat on the host:
    duplicate row indices summed (float32, or float64 for a float64 gradient)."""
    with paddle.no_grad(), vlog_silenced():  # (a bfloat16 one is cast: our op, not the user's)
        value = g._get_tensor_from_selected_rows()
        if value.dtype not in (paddle.float32, paddle.float64):  # NumPy has no bfloat16
            value = value.astype("float32")
        values = np.asarray(value.numpy())  # a copy, to the host from any device
    rows = np.asarray(g.rows(), np.int64)
    unique, inverse = np.unique(rows, return_inverse=True)
    merged = np.zeros((unique.size, *values.shape[1:]), values.dtype)
    np.add.at(merged, inverse, values)
    return merged.reshape(-1)


def is_sparse(t: Any) -> bool:
    """SelectedRows, sparse COO or CSR (not a dense or a distributed tensor)."""
    return bool(t.is_selected_rows() or t.is_sparse())


def sparse_stats(paddle: Any, g: Any) -> tuple[list[float], int] | None:
    """cpu_reduce's fields [norm, max_abs, abs_sum, zeros, nan, non-finite] of SelectedRows
    ``g``'s merged rows, and their element count: the norm, max |g| and NaN/Inf counts of the
    dense gradient (its other rows are zero); mean |g| and zeros over the rows it has. None for
    a sparse COO/CSR gradient: no statistics."""
    from .cpu_reduce import CHUNK, array_stats

    if not g.is_selected_rows():
        return None
    flat = merged_rows(paddle, g)
    return array_stats(flat, np.empty(min(flat.size, CHUNK), flat.dtype)), flat.size
