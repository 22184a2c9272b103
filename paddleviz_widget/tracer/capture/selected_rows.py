"""A SelectedRows gradient (nn.Embedding(sparse=True)'s) in the terms of the dense gradient it
stands for. Its value holds one row per looked-up id, an id looked up k times in k rows, and
the optimizer applies their sum (the other rows are zero): the value's own norm, max |g| and
NaN/Inf counts are not the parameter's gradient's, and Paddle's element-wise ops refuse it."""

from __future__ import annotations

from typing import Any

import numpy as np


def merged_rows(paddle: Any, g: Any) -> np.ndarray:
    """The non-zero rows of the dense gradient of SelectedRows ``g``, flat on the host:
    duplicate row indices summed (float32, or float64 for a float64 gradient)."""
    with paddle.no_grad():
        value = g._get_tensor_from_selected_rows()
        if value.dtype not in (paddle.float32, paddle.float64):  # NumPy has no bfloat16
            value = value.astype("float32")
        values = np.asarray(value.numpy())  # a copy, to the host from any device
    rows = np.asarray(g.rows(), np.int64)
    unique, inverse = np.unique(rows, return_inverse=True)
    merged = np.zeros((unique.size, *values.shape[1:]), values.dtype)
    np.add.at(merged, inverse, values)
    return merged.reshape(-1)


def selected_rows_stats(paddle: Any, g: Any) -> tuple[list[float], int]:
    """cpu_reduce's fields [norm, max_abs, abs_sum, zeros, nan, non-finite] of SelectedRows
    ``g``'s merged rows, and their element count: the norm, max |g| and NaN/Inf counts of the
    dense gradient (its other rows are zero); mean |g| and zeros over the rows it has."""
    from .cpu_reduce import CHUNK, array_stats

    flat = merged_rows(paddle, g)
    return array_stats(flat, np.empty(min(flat.size, CHUNK), flat.dtype)), flat.size
