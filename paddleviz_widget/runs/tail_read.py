"""The read side of the run log's tail (format.py's tail.jsonl; tail_line.py writes it): the
steps not yet in a part, as flat arrays by (step, parameter)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from . import format as fmt


def read_tail(path: Path, n: int) -> dict[str, np.ndarray] | None:
    """The steps not yet in a part; a line cut off mid-write is not read."""
    try:
        # errors="replace": damaged bytes spoil their line only (which then is not read)
        text = (path / fmt.TAIL).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    rows = []
    for line in text.split("\n")[:-1]:  # the last piece has no newline yet: not whole
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    rows = [r for r in rows if _whole_row(r, n)]
    if not rows:
        return None
    out = {
        "step": np.repeat(np.array([int(r["step"]) for r in rows], np.int64), n),
        "param": np.tile(np.arange(n, dtype=np.int64), len(rows)),
        "loss": np.repeat(np.array([_loss(r.get("loss")) for r in rows], np.float64), n),
        "loss_unknown": np.repeat(np.array([r.get("loss") is None for r in rows], bool), n),
    }
    for stat in fmt.STATS:
        values = [np.nan if v is None else v for r in rows for v in r[stat]]
        out[stat] = np.array(values, fmt.stat_dtype(stat))
    return out


def _whole_row(row: Any, n: int) -> bool:
    """A tail line as the writer writes it (a damaged one is left out, not half read)."""
    if not isinstance(row, dict) or type(row.get("step")) is not int:
        return False
    number = (int, float, type(None))
    loss = row.get("loss")
    if not isinstance(loss, number) and loss not in ("nan", "inf", "-inf"):
        return False
    return all(
        isinstance(row.get(key), list)
        and len(row[key]) == n
        and all(isinstance(v, number) and not isinstance(v, bool) for v in row[key])
        for key in fmt.STATS
    )


def _loss(value: Any) -> float:
    return np.nan if value is None else float(value)  # "nan"/"inf" strings included
