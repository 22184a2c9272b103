"""Writes a run log (format.py) from one process: a Parquet part every flush_every steps, an
JSON-lines tail appended every step, anomalies and captures as they come.

Crash safety: every file but the tail and anomalies.jsonl is written whole and renamed into
place; the tail gets one line per step, flushed to the OS before the next step starts,
so a SIGKILL loses at most the step being recorded (the OS keeps what was written). fsync
runs only on run.json: a machine crash (power loss) may lose the last seconds of a run, a
price paid for not waiting on the disk during training.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..tracer.merge.capture_columns import is_columns, unreached_of
from . import format as fmt
from .capture_file import compressed
from .claim import cannot_start, claim, unclaim
from .digest import COLUMNS, LayerGroups, summarise
from .errors import RunLogError
from .meta_spare import drop_spare, make_spare, write_spare
from .params import ParamInfo
from .run_dir_taken import taken
from .sigterm_end import WORDS as SIGTERM_WORDS
from .sigterm_end import on_sigterm
from .tail_line import TailLines


class RunLogWriter:
    def __init__(
        self, run_dir: str | os.PathLike[str], *, params: Sequence[ParamInfo], layers: list[str],
        every: int, thresholds: dict[str, float], rank: int = 0, world_size: int = 1,
        run_id: str | None = None, ranks: list[int] | None = None,
        flush_every: int = fmt.FLUSH_EVERY,
    ) -> None:  # fmt: skip
        """``run_id``: the same string in every rank of one job (None alone); ``ranks``: the
        ranks the job chose to record (trace(ranks=)), None: all of them; ``flush_every``:
        steps per Parquet part (format.flush_every)."""
        import pyarrow as pa

        # (absolute: its files stay there if the process chdirs)
        self.path = Path(run_dir).expanduser().absolute()
        if (self.path / fmt.META).exists():
            raise RunLogError(taken(self.path, None))
        if self.path.exists() and not self.path.is_dir():
            raise RunLogError(f"{self.path} is a file, not a directory: give run_dir a folder")
        try:
            for folder in (fmt.STEPS, fmt.CAPTURES, fmt.DIGESTS):
                (self.path / folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a read-only filesystem, a file on the way, no permission
            raise RunLogError(
                f"cannot make the run log {self.path}: {exc.strerror or exc}: give run_dir a "
                "folder you can write to"
            ) from None
        import paddle

        self.meta: dict[str, Any] = {
            "run_schema": fmt.RUN_SCHEMA,
            "status": "running",
            "every": every,
            "flush_every": flush_every,
            "rank": rank,
            "world_size": world_size,
            "run_id": run_id,
            "ranks": ranks,
            "paddle_version": str(paddle.__version__),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "thresholds": dict(thresholds),
            "params": [p.to_json() for p in params],
            "layers": list(layers),
        }
        self._schema = fmt.schema()
        self._names = pa.array([p.name for p in params], pa.string())
        self._layers = pa.array(layers, pa.string())
        self._layer_index = np.array([layers.index(p.layer) for p in params], np.int32)
        self._n = len(params)
        self._flush_every = flush_every
        # The first part right after step 0, then parts aligned on flush_every (steps 1-99,
        # 100-199, ...): steps/ holds a Parquet file from the first step on, so pandas,
        # polars and DuckDB read a run in progress (a glob of no files failed for up to
        # flush_every steps). The same check every step.
        self._flush_at = 1
        # The steps since the last part: their numbers and losses, and their statistics in
        # buffers kept from part to part (float32 norm, max |g|; NaN, Inf counts): a step's
        # rows are written into memory the last part used, not kept as arrays of their own.
        self._pending: list[int] = []
        self._losses: list[float | None] = []
        self._f32 = np.empty((2, flush_every, len(params)), np.float32)
        self._counts = np.empty((2, flush_every, len(params)))
        # each row's (norm, max |g|) views, made once: no NumPy indexing in a clean step
        self._row_views = list(zip(self._f32[0], self._f32[1]))
        self._groups = LayerGroups(self._layer_index, len(layers))
        self._tail_file: Any = None
        self._lines = TailLines(self._n)
        claim(self.path, self.meta)
        try:
            make_spare(self.path / fmt.META, self.meta)  # run.json's last word on a full disk
            # There from the start, empty while none is found: what the README reads it with
            # (pd.read_json(..., lines=True)) raised FileNotFoundError on a healthy run.
            (self.path / fmt.ANOMALIES).touch()
            self._new_tail()
        except OSError as exc:  # (a full disk) refused as a run dir that cannot be made is
            unclaim(self.path)
            raise RunLogError(cannot_start(self.path, exc)) from None
        self._terminated = False
        # SIGTERM said in run.json (sigterm_end.py): Paddle's handler ended it "running"
        self._sigterm_undo = on_sigterm(self._on_terminated, self._on_resumed)

    # -- per step ---------------------------------------------------------------------------
    def write_step(
        self, step: int, norm: np.ndarray, max_abs: np.ndarray, nan: np.ndarray, inf: np.ndarray,
        loss: float | None, *, clean: bool = False,
    ) -> None:  # fmt: skip
        """One step's summary; NaN in ``norm`` marks a parameter without a gradient.
        ``clean``: the caller knows every parameter has a gradient, all finite (fewer calls
        for its tail line; the same bytes)."""
        k = len(self._pending)
        f32 = self._f32
        f32[0, k] = norm  # (as astype(float32) rounds) its digest columns come with its part's
        f32[1, k] = max_abs
        self._counts[0, k] = nan
        self._counts[1, k] = inf
        self._pending.append(step)
        self._losses.append(loss)
        self._write_line(self._lines.line(step, f32[0, k], f32[1, k], nan, inf, loss, clean=clean))

    def rows(self) -> tuple[int, int, int]:
        """Where a step's rows go, for step_ir.py's watch_step: the float32 (norm, max |g|)
        and the float64 (NaN, Inf) buffers' addresses, rows per plane; the next step's row
        is ``len(self._pending)``."""
        return self._f32.ctypes.data, self._counts.ctypes.data, self._flush_every

    def next_row(self) -> int:
        return len(self._pending)

    def write_clean(self, step: int, loss: float | None) -> None:
        """write_step of a clean step whose rows are already in the buffers (watch_step put
        them there): every parameter has a gradient, all finite; the same bytes."""
        k = len(self._pending)
        self._pending.append(step)
        self._losses.append(loss)
        norm, max_abs = self._row_views[k]
        self._write_line(self._lines.clean_line(step, norm, max_abs, loss))

    def _write_line(self, line: bytes) -> None:
        # One write() to the OS (the tail is unbuffered): a SIGKILL from here on loses
        # nothing of it; a short write (a signal, a full disk) is finished by a second.
        done = self._tail_file.write(line)
        if done is not None and done < len(line):
            self._tail_file.write(line[done:])
        if len(self._pending) >= self._flush_at:
            self._flush_part()

    def write_anomaly(self, record: dict[str, Any]) -> None:
        with open(self.path / fmt.ANOMALIES, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def write_capture(self, step: int, document: dict[str, Any]) -> None:
        """``document``: the step's graph document, or (3.0) the columns it is made from
        (tracer/merge/capture_columns.py), which the reader encodes: one file either way."""
        try:  # orjson: ~6x faster than json on a 10k-GradNode document (a document has no NaN)
            import orjson

            text = bytes(orjson.dumps(document))
        except Exception:  # noqa: BLE001 - not installed, or a value orjson does not take
            text = json.dumps(document, separators=(",", ":")).encode()
        data = compressed(text)
        fmt.write_atomic(self.path / fmt.CAPTURES / fmt.capture_name(step), data)
        unreached = (
            unreached_of(document)
            if is_columns(document)
            else (document.get("meta") or {}).get("unreached_params")
        ) or []
        names = [e.get("name") for e in unreached if isinstance(e, dict)]  # the schema's shape
        line = {"step": step, "params": [n for n in names if isinstance(n, str)]}
        with open(self.path / fmt.CAPTURES / fmt.UNREACHED, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def close(self, status: str = "finished", error: str | None = None) -> None:
        if self._tail_file is None:
            return
        self._flush_part()
        self._tail_file.close()
        self._tail_file = None
        self._join_digests()
        (self.path / fmt.TAIL).unlink(missing_ok=True)
        self.meta["status"] = status
        self.meta["ended"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        if self._terminated and status == "stopped":  # the user's handler raised (sys.exit)
            error = f"{SIGTERM_WORDS} ({error})" if error else SIGTERM_WORDS
        if error:
            self.meta["error"] = error
        self._write_meta()
        self._sigterm_undo()
        drop_spare(self.path / fmt.META)

    def abandon(self, error: str) -> None:
        """close("stopped", error) after the log itself failed (a full disk, its directory
        deleted or made read-only): what can still be written is, and nothing raises. close()
        gave up at the first file it could not write: run.json said "running" for as long as
        the training went on, and the tail's descriptor stayed open (with the blocks of a
        deleted run dir's tail) until the process ended."""
        tail, self._tail_file = self._tail_file, None
        if tail is None:  # (a close() that failed past its tail: our handler goes all the same)
            self._sigterm_undo()
            return
        with contextlib.suppress(OSError):
            tail.close()
        try:
            self._flush_part()  # the steps since the last part (with no tail: none made anew)
        except Exception:  # noqa: BLE001 - they stay in the tail, which stays
            pass
        else:
            with contextlib.suppress(OSError):
                (self.path / fmt.TAIL).unlink(missing_ok=True)
            with contextlib.suppress(Exception):
                self._join_digests()
        self.meta["status"] = "stopped"
        self.meta["ended"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        self.meta["error"] = error
        self._write_ending()
        self._sigterm_undo()
        drop_spare(self.path / fmt.META)

    def _write_ending(self) -> None:
        try:
            self._write_meta()
        except OSError:  # a full disk: into the space kept for it (meta_spare.py)
            write_spare(self.path / fmt.META, self.meta)

    def _on_terminated(self) -> None:
        """SIGTERM: run.json alone says the run stopped by it (sigterm_end.py), whatever
        the step being recorded; the steps since the last part stay in the tail."""
        self._terminated = True
        self.meta["status"] = "stopped"
        self.meta["ended"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        self.meta["error"] = SIGTERM_WORDS
        self._write_ending()

    def _on_resumed(self) -> None:
        """The user's own SIGTERM handler returned: the run goes on, "running" again."""
        self._terminated = False
        self.meta["status"] = "running"
        for key in ("ended", "error"):
            self.meta.pop(key, None)
        self._write_meta()

    def let_go_in_child(self) -> None:
        """In a child of os.fork() (a DataLoader worker): the log is the parent's. Its copy
        of the tail's descriptor is closed, nothing written (unbuffered: no pending bytes);
        left to the collector, each worker said "ResourceWarning: unclosed file" on the
        user's stderr under -X dev."""
        tail, self._tail_file = self._tail_file, None
        if tail is not None:
            tail.close()
            self._sigterm_undo()  # (the child's SIGTERM is its own, as before the fork)

    # -- files ------------------------------------------------------------------------------
    def note_unwatched(self, step: int, names: list[str], replaced: Sequence[str] = ()) -> None:
        """Parameters made trainable after the run started (unwatched.py), kept in run.json
        at once: a reader of the run in progress sees them. ``replaced``: those of them that
        took the name of a watched one (its column holds the old tensor's gradients)."""
        noted = self.meta.setdefault("unwatched_params", [])
        note: dict[str, Any] = {"step": step, "params": list(names)}
        if replaced:
            note["replaced"] = list(replaced)
        noted.append(note)
        self._write_meta()

    def _write_meta(self) -> None:
        fmt.write_json_atomic(self.path / fmt.META, self.meta)

    def _new_tail(self) -> None:
        """An empty tail replaces the old one only once its steps are in a part."""
        if self._tail_file is not None:
            self._tail_file.close()
        tmp = self.path / f".{fmt.TAIL}.tmp"
        self._tail_file = open(tmp, "wb", buffering=0)  # noqa: SIM115 (appended every step)
        os.replace(tmp, self.path / fmt.TAIL)

    def _flush_part(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            return
        if self.meta.get("no_sync"):  # its steps up to here, for readers of the run going on
            self._write_meta()
        steps = np.array(self._pending, np.int64)
        n, rows = self._n, len(self._pending)
        stacked = [*self._f32[:, :rows].reshape(2, -1), *self._counts[:, :rows].reshape(2, -1)]
        absent = np.isnan(stacked[0])
        mask = absent if absent.any() else None
        unknown = np.array([v is None for v in self._losses])
        losses = np.array([np.nan if v is None else v for v in self._losses])
        known = np.repeat(~unknown, n)
        table = pa.Table.from_arrays(
            [
                pa.array(np.repeat(steps, n)),
                pa.DictionaryArray.from_arrays(np.tile(np.arange(n, dtype=np.int32), len(steps)),
                                               self._names),
                pa.DictionaryArray.from_arrays(np.tile(self._layer_index, len(steps)),
                                               self._layers),
                pa.array(stacked[0], mask=mask),
                pa.array(stacked[1], mask=mask),
                pa.array(stacked[2].astype(np.int64), mask=mask),
                pa.array(stacked[3].astype(np.int64), mask=mask),
                pa.array(np.repeat(losses, n), mask=~known),
            ],
            schema=self._schema,
        )  # fmt: skip
        first, last = int(steps[0]), int(steps[-1])
        # The digest part first: a reader that sees a part finds its digest beside it.
        grids = [s.reshape(len(steps), n) for s in stacked]
        self._write_digest_part(steps, losses, unknown, first, last, grids[0], grids[2], grids[3])
        target = self.path / fmt.STEPS / fmt.part_name(first, last)
        tmp = target.with_name(f".{target.name}.tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, target)  # no fsync: a SIGKILL loses nothing the OS has (see top)
        self._pending, self._losses = [], []
        self._flush_at = self._flush_every - (last + 1) % self._flush_every
        if self._tail_file is not None:
            self._new_tail()

    def _write_digest_part(
        self, steps: np.ndarray, losses: np.ndarray, unknown: np.ndarray, first: int, last: int,
        norm: np.ndarray, nan: np.ndarray, inf: np.ndarray,
    ) -> None:  # fmt: skip
        """digests/digest-FIRST-LAST.parquet: one row per step (digest.py, format.py), from
        the part's (S, P) float32 norms, NaN and Inf counts: summarised together, each step
        gets the same bits as alone (digest.LayerGroups), in a few calls per part instead of
        ~25 NumPy calls per step."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = summarise(self._groups, norm, nan, inf)
        n_layers = max(len(self._layers), 1)
        norms = d["layer_norm"] if len(self._layers) else np.zeros((len(steps), 1), np.float32)
        bad = d["layer_bad"] if len(self._layers) else np.zeros((len(steps), 1), bool)
        bits = d["missing_bits"]
        if not bits.shape[1]:  # no parameters: one byte, as a fixed-size binary needs one
            bits = np.zeros((len(steps), 1), np.uint8)
        table = pa.Table.from_arrays(
            [
                pa.array(steps),
                pa.array(losses, mask=unknown),
                pa.FixedSizeListArray.from_arrays(pa.array(norms.ravel()), n_layers),
                pa.FixedSizeListArray.from_arrays(pa.array(bad.ravel().astype(np.uint8)),
                                                  n_layers),
                pa.array(d["digest"]),
                pa.array(d["missing"]),
                pa.array(d["nonfinite"]),
                pa.FixedSizeBinaryArray.from_buffers(pa.binary(bits.shape[1]), len(steps),
                                                     [None, pa.py_buffer(bits.tobytes())]),
            ],
            names=list(COLUMNS),
        )  # fmt: skip
        target = self.path / fmt.DIGESTS / fmt.digest_name(first, last)
        tmp = target.with_name(f".{target.name}.tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, target)

    def _join_digests(self) -> None:
        """At the end: the digest parts as one file (digests/all.parquet, a row group per
        part), so a reader of many ranks opens one file per rank; then the parts go."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = self.path / fmt.DIGESTS
        parts = sorted(folder.glob("digest-*.parquet"))
        if not parts:
            return
        if len(parts) == 1:  # already the one file, its part's row group (a run of one part)
            os.replace(parts[0], folder / fmt.DIGEST_ALL)
            return
        try:
            table = pa.concat_tables([pq.read_table(p) for p in parts])
            tmp = folder / f".{fmt.DIGEST_ALL}.tmp"
            pq.write_table(table, tmp, compression="zstd", row_group_size=self._flush_every)
            os.replace(tmp, folder / fmt.DIGEST_ALL)
        except (OSError, pa.ArrowException):
            return  # the parts stay: readers read them instead
        for p in parts:
            p.unlink(missing_ok=True)
