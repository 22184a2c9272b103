"""One step's line of the run log's tail (format.py's tail.jsonl), as bytes.

A line is {"step", "loss", "norm", "max_abs", "nan", "inf"}: lists in run.json's params
order, null where a parameter had no gradient (all four of its stats), NaN/Inf counts as
whole numbers, a non-finite loss as the string "nan"/"inf"/"-inf". A step whose norms and
max |g| are all finite with a gradient for every parameter (nearly every step) is written by
orjson from the float32 arrays themselves (~10x fewer Python calls than json's lists); any
other step the way json always wrote it (NaN/Infinity in a present parameter's stats
included), so the two read back the same.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import orjson

_NUMPY = orjson.OPT_SERIALIZE_NUMPY


class TailLines:
    """``line(...)``: the bytes of one step's line, newline included, for ``n`` parameters."""

    def __init__(self, n: int) -> None:
        self._zeros = b"[" + b",".join([b"0"] * n) + b"]"  # the usual NaN/Inf counts
        self._zero_list = [0] * n

    def line(
        self, step: int, norm: np.ndarray, max_abs: np.ndarray, nan: np.ndarray,
        inf: np.ndarray, loss: float | None, *, clean: bool = False,
    ) -> bytes:  # fmt: skip
        """``norm``, ``max_abs``: float32 as the Parquet part keeps them (NaN norm: no
        gradient); ``nan``, ``inf``: counts. ``clean``: every parameter has a gradient, all
        finite (no NaN/Inf counts): the same line in one orjson call."""
        if clean:
            return self.clean_line(step, norm, max_abs, loss)
        if not math.isfinite(float(np.add.reduce(norm)) + float(np.add.reduce(max_abs))):
            return _json_line(step, norm, max_abs, nan, inf, loss)
        if loss is None:
            shown = b"null"
        elif math.isfinite(loss):
            shown = orjson.dumps(float(loss))
        else:
            shown = b'"%s"' % str(loss).encode()
        return b"".join((
            b'{"step":%d,"loss":%s,"norm":' % (step, shown),
            orjson.dumps(norm, option=_NUMPY),
            b',"max_abs":',
            orjson.dumps(max_abs, option=_NUMPY),
            b',"nan":',
            _counts(nan, self._zeros),
            b',"inf":',
            _counts(inf, self._zeros),
            b"}\n",
        ))  # fmt: skip

    def clean_line(self, step: int, norm: np.ndarray, max_abs: np.ndarray,
                   loss: float | None) -> bytes:  # fmt: skip
        """line() of a clean step: one orjson call."""
        value = loss if loss is None or math.isfinite(loss) else str(loss)
        line = {"step": step, "loss": value, "norm": norm, "max_abs": max_abs,
                "nan": self._zero_list, "inf": self._zero_list}  # fmt: skip
        out = orjson.dumps(line, option=_NUMPY | orjson.OPT_APPEND_NEWLINE)
        # orjson writes inf as null, read back as "no gradient": a finite gradient's norm
        # past float32's range (an exploding model's last finite steps) is inf, as json has it
        if b"null" in out and (value is not None or out.count(b"null") > 1):
            zeros = np.zeros(len(norm))
            return _json_line(step, norm, max_abs, zeros, zeros, loss)
        return out


def _counts(values: np.ndarray, zeros: bytes) -> bytes:
    if not values.any():
        return zeros
    return orjson.dumps(values.astype(np.int64), option=_NUMPY)


def _json_line(
    step: int, norm: np.ndarray, max_abs: np.ndarray, nan: np.ndarray, inf: np.ndarray,
    loss: float | None,
) -> bytes:  # fmt: skip
    """The line as json writes it: null for a parameter without a gradient, NaN/Infinity
    for a non-finite value of a present one (json.loads reads both)."""
    shown = loss if loss is None or math.isfinite(loss) else str(loss)
    line: dict[str, Any] = {"step": step, "loss": shown}
    absent = np.isnan(norm)
    gaps = absent.tolist() if absent.any() else None
    for key, values in zip(("norm", "max_abs", "nan", "inf"), (norm, max_abs, nan, inf)):
        listed = (values.astype(np.int64) if key in ("nan", "inf") else values).tolist()
        line[key] = listed if gaps is None else [None if a else v for a, v in zip(gaps, listed)]
    return (json.dumps(line, separators=(",", ":")) + "\n").encode()
