"""The step summaries of a run log as the reader needs them, read lazily (reader.py).

Opening a run reads only each Parquet part's ``step`` and ``loss`` columns (what the first
view needs: the step axis, the loss curve); a stat column ("norm", ...) is read from every
part the first time it is asked for, then kept. The writer writes a part's rows step-major in
run.json's parameter order (log_writer.py): such a part's column is one reshape to (steps,
params), no scatter; a part in any other order (written by something else) is placed row by
row through its ``param`` column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import format as fmt
from .errors import RunLogError


class Part:
    """One Parquet part: its steps and loss (one value a step), its stat columns on demand."""

    def __init__(self, path: Path, n_params: int, index: dict[str, int]) -> None:
        self.path = path
        self._n = n_params
        self._index = index
        table = self._read(["step", "loss"])
        step = table.column("step").to_numpy()
        loss = table.column("loss").to_numpy(zero_copy_only=False)
        # null: the loss was not known (kept apart from a NaN loss, a problem to mark)
        unknown = table.column("loss").is_null().to_numpy(zero_copy_only=False)
        self.rows = len(step)
        self._placement: np.ndarray | None = None  # row -> parameter, when not step-major
        if self.rows % max(n_params, 1) == 0 and n_params:
            grid = step.reshape(-1, n_params)
            self.regular = bool((grid == grid[:, :1]).all())
        else:
            self.regular = False
        if self.regular:
            self.step_of_row = None
            self.steps = step[::n_params].copy()
            self.loss = loss[::n_params].astype(np.float64)
            self.loss_unknown = unknown[::n_params].astype(bool)
        else:
            self.step_of_row = step
            self.steps, first = np.unique(step, return_index=True)
            self.loss = loss[first].astype(np.float64)
            self.loss_unknown = unknown[first].astype(bool)
        self._stats: dict[str, np.ndarray] = {}
        # A part the writer tagged step-major (run_schema 1.1) needs no check of its order.
        tags = table.schema.metadata or {}
        self._order_known = self.regular and tags.get(fmt.LAYOUT_KEY) == fmt.STEP_MAJOR

    def stat(self, name: str) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(values, step of each row, parameter of each row); the last two are None when the
        values are step-major in run.json's order (reshape to (steps, params))."""
        if not self._order_known:
            self._check_order()
        values = self._stats.get(name)
        if values is None:
            values = self._stats[name] = self._floats(name)
        if self._placement is None:
            return values, None, None
        return values, self.step_of_row, self._placement

    def _floats(self, name: str) -> np.ndarray:
        """Stat column ``name`` as float32 (norm, max |g|) or float64 (NaN / Inf counts: exact
        past 2**24), NaN where null; a column of another type than numbers, or of another
        length than the part's steps, is a damaged part, said as such."""
        import pyarrow as pa

        column = self._read([name]).column(name)
        if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
            wrong = f"holds {column.type}, not numbers"
        elif len(column) != self.rows:
            wrong = f"has {len(column)} rows where its steps have {self.rows}"
        else:
            to = pa.float64() if name in fmt.COUNTS else pa.float32()
            return column.cast(to, safe=False).fill_null(float("nan")).to_numpy()
        raise RunLogError(
            f"{self.path}: its {name!r} column {wrong}: it was damaged after it was written; "
            "move it away to read the rest"
        )

    def _check_order(self) -> None:
        """Step-major in run.json's order, or the row -> parameter placement."""
        param = self._read(["param"]).column("param").combine_chunks()
        lookup, codes = _param_codes(param, self._index, self.path)
        placement = lookup[codes]
        self._order_known = True
        if self.regular and (placement.reshape(-1, self._n) == np.arange(self._n)).all():
            return
        if self.regular:  # every step's rows together, but in another parameter order
            self.step_of_row = np.repeat(self.steps, self._n)
            self.regular = False
        self._placement = placement

    def _read(self, columns: list[str]) -> Any:
        import pyarrow.parquet as pq

        try:
            return pq.read_table(self.path, columns=columns)
        except Exception as exc:  # pyarrow raises its own types for a damaged file
            raise RunLogError(
                f"{self.path} cannot be read as Parquet ({exc}): it was damaged after it was "
                "written (parts are renamed into place whole); move it away to read the rest"
            ) from None


def _param_codes(param: Any, index: dict[str, int], path: Path) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow as pa

    if not pa.types.is_dictionary(param.type):
        param = param.dictionary_encode()
    names = param.dictionary.to_pylist()
    unknown = [n for n in names if n not in index]
    if unknown:
        raise RunLogError(
            f"{path}: rows name parameters {unknown[:3]} that run.json does not list: the "
            "files are from different runs"
        )
    lookup = np.array([index[n] for n in names], np.int64)
    return lookup, param.indices.to_numpy(zero_copy_only=False)
