"""Per-step summaries of a step's per-parameter statistics (run_schema 1.2): each layer's
gradient L2 norm and NaN/Inf flag, and a digest a multi-rank reader compares across ranks
without reading every parameter's column. One implementation for both sides: the writer
(log_writer.py) computes them for each step it is given, the reader (reader.py) for steps
whose log predates 1.2 (or still sits in the tail), from the same per-parameter arrays.

The digest of a step is a 64-bit hash of the float32 gradient norms, NaN and Inf counts of
its parameters (0 for a parameter without a gradient) and the bitset of the parameters
without a gradient. After DataParallel's all-reduce the synchronised gradients are bitwise
equal on every rank, and so are their norms and digests; a differing digest is a step to look
at parameter by parameter (cross_rank.py).
"""

from __future__ import annotations

import hashlib

import numpy as np

#: The columns of a digest part (digests/digest-FIRST-LAST.parquet), one row per step.
COLUMNS = ("step", "loss", "layer_norm", "layer_bad", "digest", "missing", "nonfinite",
           "missing_bits")  # fmt: skip


class LayerGroups:
    """Each parameter's layer, for sums over each layer's parameters. np.bincount adds a bin's
    values in the parameters' order whatever the number of rows, so one step summarised alone
    (the writer) and among many (the reader) gets the same bits."""

    def __init__(self, layer_of: np.ndarray, n_layers: int) -> None:
        self.layer_of = np.asarray(layer_of, np.int64)
        self.n_layers = n_layers
        self._empty = np.bincount(self.layer_of, minlength=n_layers) == 0  # layers without any

    def _sums(self, values: np.ndarray) -> np.ndarray:
        rows = len(values)
        index = self.layer_of if rows == 1 else (
            np.arange(rows)[:, None] * self.n_layers + self.layer_of).ravel()  # fmt: skip
        sums = np.bincount(index, values.ravel(), minlength=rows * self.n_layers)
        return sums.reshape(rows, self.n_layers)

    def l2(self, norm: np.ndarray, absent: np.ndarray | None = None) -> np.ndarray:
        """float32 (S, L): L2 over each layer's parameter norms (float64 sums), NaN where
        none of its parameters had a gradient (NaN norms are left out)."""
        if absent is None:
            absent = np.isnan(norm)
        squares = norm.astype(np.float64)
        some_absent = absent.any()
        if some_absent:
            squares[absent] = 0.0
        np.multiply(squares, squares, out=squares)
        with np.errstate(over="ignore"):  # a layer's L2 past float32's range: inf, as float32
            out = np.sqrt(self._sums(squares)).astype(np.float32)  # rounds it; no warning
        if some_absent:
            out[self._sums((~absent).astype(np.float64)) == 0] = np.nan
        if self._empty.any():
            out[:, self._empty] = np.nan
        return out

    def any(self, flags: np.ndarray) -> np.ndarray:
        """bool (S, L): some parameter of the layer is flagged."""
        return self._sums(flags.astype(np.float64)) > 0


def summarise(
    groups: LayerGroups, norm: np.ndarray, nan: np.ndarray, inf: np.ndarray
) -> dict[str, np.ndarray]:
    """The digest columns but step and loss, for (S, P) arrays of norm (NaN: no gradient),
    NaN and Inf counts (any dtype; ignored where there is no gradient)."""
    norm = np.asarray(norm, np.float32)
    absent = np.isnan(norm)
    some_absent = bool(absent.any())
    bad = (np.asarray(nan) > 0) | (np.asarray(inf) > 0)  # NaN (no gradient) > 0 is False
    if some_absent:
        bad &= ~absent
    some_bad = bool(bad.any())
    bits = np.packbits(absent, axis=1)
    shown = np.where(absent, np.float32(0), norm) if some_absent else norm
    counts = None
    if some_bad:
        counts = np.stack([np.where(bad, nan, 0), np.where(bad, inf, 0)], 1).astype(np.int64)
    row_bad = bad.any(1) if some_bad else None
    digest = np.empty(len(norm), np.uint64)
    for i in range(len(norm)):  # one hash per step: microseconds
        h = hashlib.blake2b(shown[i].tobytes(), digest_size=8)
        if counts is not None and row_bad is not None and row_bad[i]:
            h.update(counts[i].tobytes())
        h.update(bits[i].tobytes())
        digest[i] = int.from_bytes(h.digest(), "little")
    n_layers = groups.n_layers
    return {
        "layer_norm": groups.l2(norm, absent),
        "layer_bad": groups.any(bad) if some_bad else np.zeros((len(norm), n_layers), bool),
        "digest": digest,
        "missing": absent.sum(1).astype(np.int32),
        "nonfinite": bad.sum(1).astype(np.int32),
        "missing_bits": bits,
    }
