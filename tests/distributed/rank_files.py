"""The tests' own reading of what a launched job left on disk, independent of the package's
reader: each rank's run log read with pyarrow and json directly, and the gradients the
training script itself saved (p.grad after each backward, OUT/rank-R/grads.npz)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def rank_path(run_dir: Path, rank: int) -> Path:
    return run_dir / f"rank-{rank:05d}"


def meta(run_dir: Path, rank: int) -> dict[str, Any]:
    return json.loads((rank_path(run_dir, rank) / "run.json").read_text())


def rows(run_dir: Path, rank: int) -> dict[tuple[int, str], dict[str, Any]]:
    """(step, param) -> that row of the rank's Parquet parts (a finished log has no tail)."""
    parts = sorted((rank_path(run_dir, rank) / "steps").glob("part-*.parquet"))
    assert parts, f"no Parquet part in {rank_path(run_dir, rank)}"
    table = pa.concat_tables([pq.read_table(p) for p in parts])
    found = {}
    for row in table.to_pylist():
        found[(row["step"], row["param"])] = row
    return found


def anomalies(run_dir: Path, rank: int) -> list[dict[str, Any]]:
    path = rank_path(run_dir, rank) / "anomalies.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def captures(run_dir: Path, rank: int) -> dict[int, dict[str, Any]]:
    """Each captured step's graph document, as the reader makes it (since run_schema 3.0 the
    file holds the columns it is made from), with what the rank's writer added to its meta."""
    from paddleviz_widget.runs import open_run

    run = open_run(rank_path(run_dir, rank))
    return {step: run.graph(step) for step in run.captured_steps}


def script_grads(out: Path, rank: int) -> dict[tuple[int, str], np.ndarray]:
    """(step, param) -> the gradient the script read from p.grad after that step's backward."""
    saved = np.load(out / f"rank-{rank}" / "grads.npz")
    return {(int(k.split("/", 1)[0]), k.split("/", 1)[1]): saved[k] for k in saved.files}


def script_result(out: Path, rank: int) -> dict[str, Any]:
    return json.loads((out / f"rank-{rank}" / "result.json").read_text())


def stats(grad: np.ndarray) -> dict[str, float]:
    """What the run log says of a gradient: L2 norm and max |g| over the finite elements,
    NaN and Inf counts (README "Watching a training run")."""
    g = grad.astype(np.float64).ravel()
    finite = g[np.isfinite(g)]
    return {
        "norm": float(np.sqrt(np.sum(finite**2))),
        "max_abs": float(np.max(np.abs(finite))) if finite.size else 0.0,
        "nan": int(np.isnan(g).sum()),
        "inf": int(np.isinf(g).sum()),
    }


def assert_rows_match_grads(run_dir: Path, out: Path, rank: int) -> int:
    """Every (step, param) row of the rank's log against the script's own p.grad: same
    parameters, norms to float32 precision, NaN/Inf counts exactly. Returns rows checked."""
    logged, grads = rows(run_dir, rank), script_grads(out, rank)
    with_grad = {k for k, row in logged.items() if row["norm"] is not None}  # null: no p.grad
    assert with_grad == set(grads), f"rank {rank}: rows {sorted(with_grad ^ set(grads))}"
    for key, grad in grads.items():
        want, row = stats(grad), logged[key]
        assert row["nan"] == want["nan"] and row["inf"] == want["inf"], (rank, key, row, want)
        assert np.isclose(row["norm"], want["norm"], rtol=1e-5, atol=1e-7), (rank, key, row, want)
        if want["nan"] + want["inf"] < grad.size:
            assert np.isclose(row["max_abs"], want["max_abs"], rtol=1e-6), (rank, key, row)
    return len(grads)
