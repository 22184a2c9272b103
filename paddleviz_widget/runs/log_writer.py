"""Writes a run log (format.py) from one process: a Parquet part every FLUSH_EVERY steps, an
Arrow IPC tail appended every step, anomalies and captures as they come.

Crash safety: every file but the tail and anomalies.jsonl is written whole and renamed into
place; the tail gets one record batch per step, flushed to the OS before the next step starts,
so a SIGKILL loses at most the step being recorded (the OS keeps what was written; only a
machine crash can lose more, as fsync runs on parts and on close, not every step).
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import format as fmt
from .errors import RunLogError
from .params import ParamInfo


class RunLogWriter:
    def __init__(
        self, run_dir: str | os.PathLike[str], *, params: Sequence[ParamInfo], layers: list[str],
        every: int, thresholds: dict[str, float], rank: int = 0, world_size: int = 1,
    ) -> None:  # fmt: skip
        import pyarrow as pa

        self.path = Path(run_dir)
        if (self.path / fmt.META).exists():
            raise RunLogError(
                f"{self.path} already holds a run log: give trace(run_dir=) or --run-dir a new "
                "directory (e.g. runs/exp2), or delete the old one"
            )
        if self.path.exists() and not self.path.is_dir():
            raise RunLogError(f"{self.path} is a file, not a directory: give run_dir a folder")
        (self.path / fmt.STEPS).mkdir(parents=True, exist_ok=True)
        (self.path / fmt.CAPTURES).mkdir(exist_ok=True)
        import paddle

        self.meta: dict[str, Any] = {
            "run_schema": fmt.RUN_SCHEMA,
            "status": "running",
            "every": every,
            "flush_every": fmt.FLUSH_EVERY,
            "rank": rank,
            "world_size": world_size,
            "paddle_version": str(paddle.__version__),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "thresholds": dict(thresholds),
            "params": [p.to_json() for p in params],
            "layers": list(layers),
        }
        self._schema = fmt.schema()
        n = len(params)
        self._names = pa.array([p.name for p in params], pa.string())
        self._layers = pa.array([p.layer for p in params], pa.string())
        self._n = n
        self._pending: list[Any] = []  # record batches since the last part
        self._tail: Any = None
        self._tail_file: Any = None
        self._write_meta()
        self._new_tail()

    # -- per step ---------------------------------------------------------------------------
    def write_step(
        self, step: int, norm: np.ndarray, max_abs: np.ndarray, nan: np.ndarray, inf: np.ndarray,
        loss: float | None,
    ) -> None:  # fmt: skip
        """One step's summary; NaN in ``norm`` marks a parameter without a gradient."""
        import pyarrow as pa

        absent = np.isnan(norm)
        mask = absent if absent.any() else None
        n = self._n
        batch = pa.RecordBatch.from_arrays(
            [
                pa.array(np.full(n, step, np.int64)),
                self._names,
                self._layers,
                pa.array(norm.astype(np.float32, copy=False), mask=mask),
                pa.array(max_abs.astype(np.float32, copy=False), mask=mask),
                pa.array(np.nan_to_num(nan).astype(np.int64), mask=mask),
                pa.array(np.nan_to_num(inf).astype(np.int64), mask=mask),
                pa.array(np.full(n, np.nan if loss is None else loss), mask=_loss_mask(n, loss)),
            ],
            schema=self._schema,
        )
        self._pending.append(batch)
        self._tail.write_batch(batch)
        self._tail_file.flush()
        if len(self._pending) >= fmt.FLUSH_EVERY:
            self._flush_part()

    def write_anomaly(self, record: dict[str, Any]) -> None:
        with open(self.path / fmt.ANOMALIES, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def write_capture(self, step: int, document: dict[str, Any]) -> None:
        data = gzip.compress(json.dumps(document, separators=(",", ":")).encode(), 6)
        fmt.write_atomic(self.path / fmt.CAPTURES / fmt.capture_name(step), data)

    def close(self, status: str = "finished", error: str | None = None) -> None:
        if self._tail is None:
            return
        self._flush_part()
        self._tail.close()
        self._tail_file.close()
        self._tail = self._tail_file = None
        (self.path / fmt.TAIL).unlink(missing_ok=True)
        self.meta["status"] = status
        self.meta["ended"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        if error:
            self.meta["error"] = error
        self._write_meta()

    # -- files ------------------------------------------------------------------------------
    def _write_meta(self) -> None:
        fmt.write_json_atomic(self.path / fmt.META, self.meta)

    def _new_tail(self) -> None:
        """An empty tail replaces the old one only once its steps are in a part."""
        import pyarrow as pa

        if self._tail is not None:
            self._tail.close()
            self._tail_file.close()
        tmp = self.path / f".{fmt.TAIL}.tmp"
        self._tail_file = open(tmp, "wb")  # noqa: SIM115 (kept open: appended every step)
        self._tail = pa.ipc.new_stream(self._tail_file, self._schema)
        self._tail_file.flush()
        os.replace(tmp, self.path / fmt.TAIL)

    def _flush_part(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            return
        table = pa.Table.from_batches(self._pending, self._schema)
        first = int(self._pending[0].column(0)[0].as_py())
        last = int(self._pending[-1].column(0)[0].as_py())
        target = self.path / fmt.STEPS / fmt.part_name(first, last)
        tmp = target.with_name(f".{target.name}.tmp")
        pq.write_table(table, tmp, compression="zstd", use_dictionary=["param", "layer"])
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        self._pending = []
        if self._tail is not None:
            self._new_tail()


def _loss_mask(n: int, loss: float | None) -> np.ndarray | None:
    return np.ones(n, bool) if loss is None else None
