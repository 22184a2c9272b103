"""The reader's side of the per-step digests (digest.py): a digest part read from disk
(run_schema 1.2), or the same columns computed from the per-parameter statistics of steps
that have none (a 1.0/1.1 log, or the steps still in the tail)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .digest import COLUMNS
from .errors import RunLogError


def read_digest_part(path: Path, n_layers: int, columns: Any = COLUMNS) -> dict[str, np.ndarray]:
    """A digest part's columns as arrays: layer_norm float32 (S, L), layer_bad bool (S, L),
    missing_bits uint8 (S, bytes), the others (S,)."""
    import pyarrow.parquet as pq

    if not path.exists():
        raise RunLogError(f"{path} does not exist")
    try:
        table = pq.read_table(path, columns=list(columns))
    except Exception as exc:  # pyarrow raises its own types for a damaged file
        raise RunLogError(
            f"{path} cannot be read as Parquet ({exc}): it was damaged after it was written; "
            "move it away and the reader computes its columns from the part beside it"
        ) from None
    try:
        return _columns(table, path, n_layers, columns)
    except (AttributeError, TypeError, ValueError, IndexError) as exc:  # its columns' types or
        # lengths changed by the damage (pyarrow's ArrowInvalid is a ValueError)
        raise RunLogError(
            f"{path}: its columns are not what the writer wrote ({exc}): it was damaged after "
            "it was written; move it away and the reader computes its columns from the part "
            "beside it"
        ) from None


def _columns(table: Any, path: Path, n_layers: int, columns: Any) -> dict[str, np.ndarray]:
    rows = table.num_rows
    out: dict[str, np.ndarray] = {
        "step": table.column("step").to_numpy(),
        "loss": table.column("loss").to_numpy(zero_copy_only=False).astype(np.float64),
    }
    for key, dtype in (("layer_norm", np.float32), ("layer_bad", np.uint8)):
        if key not in columns:
            continue
        flat = table.column(key).combine_chunks().flatten().to_numpy(zero_copy_only=False)
        grid = np.asarray(flat, dtype).reshape(rows, -1) if rows else np.zeros((0, n_layers))
        out[key] = grid[:, :n_layers].astype(np.float32 if key == "layer_norm" else bool)
    for key in ("digest", "missing", "nonfinite"):
        out[key] = table.column(key).to_numpy()
    bits = table.column("missing_bits").combine_chunks()
    width = bits.type.byte_width
    values = np.frombuffer(bits.buffers()[1], np.uint8)
    out["missing_bits"] = values[bits.offset * width : (bits.offset + rows) * width].reshape(
        rows, width
    )
    if "layer_norm" in out and out["layer_norm"].shape != (rows, n_layers):
        raise RunLogError(f"{path}: its layer_norm rows do not have one value per layer of "
                          "run.json: the files are from different runs")  # fmt: skip
    return out


def rows_in(
    steps: np.ndarray, got: dict[str, np.ndarray], path: Path, part_steps: Any = None
) -> np.ndarray:
    """The rows of the log's ``steps`` that ``got``'s steps are; RunLogError when one is not
    among them, or they are not its part's ``part_steps`` (a damaged digest part: placed, it
    would land past the log or on other steps' rows)."""
    rows = np.searchsorted(steps, got["step"])
    wrong = (rows >= len(steps)).any() or not np.array_equal(steps[rows], got["step"])
    if wrong or (part_steps is not None and not np.array_equal(got["step"], part_steps)):
        raise RunLogError(
            f"{path} names steps the log's parts do not hold: it was damaged after it was "
            "written; move it away and the reader computes its columns from the part beside it"
        )
    return rows


def place(target: dict[str, np.ndarray], rows: np.ndarray, source: dict[str, Any]) -> None:
    """Copy ``source``'s columns (of the steps at ``rows``) into the (S, ...) ``target``."""
    for key, grid in target.items():
        value = source[key]
        if key == "missing_bits" and value.shape[1] != grid.shape[1]:
            value = value[:, : grid.shape[1]]  # a 0-parameter log's one padding byte
        grid[rows] = value


def empty(steps: int, n_layers: int, n_params: int) -> dict[str, np.ndarray]:
    return {
        "layer_norm": np.full((steps, n_layers), np.nan, np.float32),
        "layer_bad": np.zeros((steps, n_layers), bool),
        "digest": np.zeros(steps, np.uint64),
        "missing": np.zeros(steps, np.int32),
        "nonfinite": np.zeros(steps, np.int32),
        "missing_bits": np.zeros((steps, (n_params + 7) // 8), np.uint8),
    }
