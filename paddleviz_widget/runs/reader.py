"""``open_run(path)``: a run log (format.py) as arrays, also while its writer is still going;
``refresh()`` reads what it appended since. The run explorer uses only this API
(/work/notes/run-contract.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..compat.zlib_guard import refuse_broken_zlib
from . import digest_parts
from . import format as fmt
from .anomaly import INFORMATION, Anomaly
from .capture_read import ProblemsCache, read_capture
from .digest import LayerGroups, summarise
from .errors import RunLogError
from .meta_read import read_meta
from .params import ParamInfo
from .parts import Part
from .status import SameRun, effective_status, last_write, same_run
from .tail_read import read_tail

__all__ = ["Anomaly", "ParamInfo", "RunLog", "RunLogError", "open_run"]

_INT_STATS = ("nan", "inf")


def open_run(path: str | os.PathLike[str]) -> RunLog:
    """The run log in directory ``path``; RunLogError names the path and the fix."""
    if not isinstance(path, (str, os.PathLike)):  # else pathlib's words, naming no argument
        raise TypeError(
            f"open_run takes a run log's directory (a str or path: the run_dir of "
            f"trace(..., run_dir=) or --run-dir), not {type(path).__name__}"
        )
    return RunLog(Path(path).expanduser())  # ~: as pandas reads it too


class RunLog:
    """A run log, read. Arrays are by recorded step (rows) and parameter or layer (columns)."""

    def __init__(self, path: Path) -> None:
        refuse_broken_zlib()  # its parts are read by pyarrow, its captures gunzipped
        self.path = path
        self.meta = read_meta(path)
        self.params = [ParamInfo.from_json(p) for p in self.meta["params"]]
        self.layers: list[str] = list(self.meta["layers"])
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self._layer_of = np.array([self.layers.index(p.layer) for p in self.params], np.int64)
        self._parts: dict[str, Part] = {}  # part file name -> its steps (stats on demand)
        self._tail: dict[str, np.ndarray] | None = None
        self.steps = np.zeros(0, np.int64)
        self.loss = np.zeros(0, np.float64)
        #: True where the loss of the step was not known (``loss`` NaN there, as for a NaN loss)
        self.loss_unknown = np.zeros(0, bool)
        self._stats: dict[str, np.ndarray] = {}  # stat -> (steps, params), made when asked
        self._groups = LayerGroups(self._layer_of, len(self.layers))
        self._digest_files: dict[str, dict[str, np.ndarray] | None] = {}  # part name -> read
        self._digests: dict[str, np.ndarray] | None = None
        self._assembled: tuple[Any, ...] | None = None
        self.anomalies: list[Anomaly] = []
        self.captured_steps: list[int] = []
        self._signature: tuple[Any, ...] = ()
        self._capture_problems: ProblemsCache = {}  # what graph(step) found, by file
        # When the run last wrote a step (epoch seconds; None: unknown), read at refresh():
        # a "running" run silent for long may be gone (status.last_write)
        self.last_write: float | None = None
        self._same = SameRun()  # (a stat of run.json before a read on demand)
        self.refresh()

    # -- contract ---------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read what the writer added since; True if anything is new."""
        meta = self._same_run()
        meta["status"] = effective_status(meta)
        self.meta = meta
        self.last_write = last_write(self.path)
        # the tail before the parts: a part written meanwhile holds its steps
        tail = read_tail(self.path, len(self.params))
        for name in sorted(os.listdir(self.path / fmt.STEPS)) if self._has_steps() else ():
            if name.endswith(".parquet") and name.startswith("part-") and name not in self._parts:
                self._parts[name] = Part(self.path / fmt.STEPS / name, len(self.params),
                                         self._index)  # fmt: skip
        self._assemble(tail)
        self.anomalies = self._read_anomalies()
        self.captured_steps = self._read_captures()
        signature = (len(self.steps), len(self.anomalies), tuple(self.captured_steps),
                     self.meta.get("status"))  # fmt: skip
        changed = signature != self._signature
        self._signature = signature
        return changed

    def _same_run(self) -> dict[str, Any]:
        """run.json as it is now; RunLogError when the directory no longer holds the run read
        here (deleted, moved, or another run written into it). At refresh; before a part or a
        capture is read on demand, ``self._same`` checks the same (a stat): a re-run of the same
        script writes files of the same names, which would be shown as this run's, silently."""
        if not (self.path / fmt.META).exists():
            raise RunLogError(
                f"{self.path} no longer holds the run read here (its {fmt.META} is gone: the "
                f"directory was deleted or moved): what was read before ({len(self.steps)} "
                "steps) is still shown; open the run again where it is now"
            )
        meta = read_meta(self.path)
        same_run(self.path, self.meta, meta)
        return meta

    def param_stat(self, stat: str) -> np.ndarray:
        """(steps, params): "norm", "max_abs" (float32), "nan" or "inf" (float64: a count is
        exact); NaN where a parameter had no gradient at that step."""
        if stat not in fmt.STATS:
            raise ValueError(f"stat must be one of {', '.join(fmt.STATS)}, got {stat!r}")
        grid = self._stats.get(stat)
        if grid is None:
            self._same.check(self.path, self.meta)  # the parts read now are this run's
            grid = self._stats[stat] = self._grid(stat)
        return grid

    def layer_norm(self) -> np.ndarray:
        """float32 (steps, layers): the L2 norm over each layer's parameters' gradients (NaN
        where none of them had a gradient). Read from the digest parts (1.2), not from every
        parameter's column."""
        return self.digests()["layer_norm"]

    def layer_bad(self) -> np.ndarray:
        """bool (steps, layers): a parameter of the layer had NaN/Inf gradient elements."""
        return self.digests()["layer_bad"]

    def digests(self) -> dict[str, np.ndarray]:
        """Each recorded step's digest columns (digest.py), rows as ``steps``: layer_norm,
        layer_bad, digest, missing, nonfinite, missing_bits. From the digest parts; steps
        without one (a 1.0/1.1 log, the tail) computed from their per-parameter statistics."""
        if self._digests is not None:
            return self._digests
        out = digest_parts.empty(len(self.steps), len(self.layers), len(self.params))
        covered = np.zeros(len(self.steps), bool)
        whole = self._digest_file(fmt.DIGEST_ALL)  # a finished log's parts in one file
        if whole is not None and len(whole["step"]):
            rows = digest_parts.rows_in(self.steps, whole, self._digest_path(fmt.DIGEST_ALL))
            digest_parts.place(out, rows, whole)
            covered[rows] = True
        for name in sorted(self._parts):
            if covered[np.searchsorted(self.steps, self._parts[name].steps)].all():
                continue
            got = self._digest_file(name)
            if got is not None and len(got["step"]):
                path, held = self._digest_path(name), self._parts[name].steps
                rows = digest_parts.rows_in(self.steps, got, path, held)
                digest_parts.place(out, rows, got)
                covered[rows] = True
        missing = np.flatnonzero(~covered)
        tail = self._tail
        if len(missing) and tail is not None:
            n = max(len(self.params), 1)
            tail_steps = tail["step"][::n]
            rows = np.searchsorted(self.steps, tail_steps)
            grids = [tail[k].reshape(-1, len(self.params)) for k in ("norm", "nan", "inf")]
            digest_parts.place(out, rows, summarise(self._groups, *grids))
            covered[rows] = True
            missing = np.flatnonzero(~covered)
        if len(missing):  # parts without a digest part (run_schema 1.0/1.1)
            grids = [self.param_stat(k)[missing] for k in ("norm", "nan", "inf")]
            for r in range(0, len(missing), _ROWS):  # blocks of rows that stay in the cache
                block = [g[r : r + _ROWS] for g in grids]
                digest_parts.place(out, missing[r : r + _ROWS], summarise(self._groups, *block))
        self._digests = out
        return out

    def param_row(self, stat: str, step: int) -> np.ndarray:
        """(params,): one recorded step's stat (param_stat's dtype), reading only the part
        holding it."""
        n, tail = len(self.params), self._tail
        if stat in self._stats or stat not in fmt.STATS:
            return self.param_stat(stat)[np.searchsorted(self.steps, step)]
        self._same.check(self.path, self.meta)  # the part read now is this run's
        if tail is not None and (at := np.flatnonzero(tail["step"][:: max(n, 1)] == step)).size:
            return tail[stat].reshape(-1, n)[at[0]].copy()
        for part in (p for p in self._parts.values() if step in p.steps):
            values, step_of_row, param = part.stat(stat)
            if param is None or step_of_row is None:
                return values.reshape(-1, n)[int(np.searchsorted(part.steps, step))].copy()
            row = np.full(n, np.nan, np.float32)
            row[param[step_of_row == step]] = values[step_of_row == step]
            return row
        raise ValueError(f"step {step} is not recorded in run log {self.path}")

    def _digest_path(self, name: str) -> Path:
        leaf = name if name == fmt.DIGEST_ALL else fmt.digest_of_part(name)
        return self.path / fmt.DIGESTS / leaf

    def _digest_file(self, name: str) -> dict[str, np.ndarray] | None:
        """Part ``name``'s digest part, or DIGEST_ALL; None where there is none."""
        if name not in self._digest_files or name == fmt.DIGEST_ALL:
            path = self._digest_path(name)
            try:
                got = digest_parts.read_digest_part(path, len(self.layers))
            except RunLogError:
                if path.exists():
                    raise
                got = None  # none (1.0/1.1), or joined into DIGEST_ALL meanwhile
            if name == fmt.DIGEST_ALL:
                return got
            self._digest_files[name] = got
        return self._digest_files[name]

    def graph(self, step: int) -> dict[str, Any]:
        """The graph document (schema 2.x) of a fully captured step."""
        self._same.check(self.path, self.meta)  # a capture of that name: another run's?
        path = fmt.capture_path(self.path / fmt.CAPTURES, int(step))
        if not path.exists():
            shown = ", ".join(map(str, self.captured_steps[:20])) or "none yet"
            raise RunLogError(f"step {step} of {self.path} has no full capture; captured steps: "
                              f"{shown}")  # fmt: skip
        return read_capture(path, self._capture_problems)

    def problems(self) -> list[Anomaly]:
        """The anomalies that are problems (``anomalies`` also holds information: the steps a
        GradScaler skipped)."""
        return [a for a in self.anomalies if a.kind not in INFORMATION]

    def summary_frame(self) -> Any:
        """The per-step rows as a pandas DataFrame (the format's long rows)."""
        import pandas as pd

        s, p = np.meshgrid(self.steps, np.arange(len(self.params)), indexing="ij")
        cols: dict[str, Any] = {
            "step": s.ravel(),
            "param": np.array([q.name for q in self.params], object)[p.ravel()],
        }
        cols.update({k: self.param_stat(k).ravel() for k in fmt.STATS})
        return pd.DataFrame(cols)

    # -- reading ----------------------------------------------------------------------------
    def _has_steps(self) -> bool:
        return (self.path / fmt.STEPS).is_dir()

    def _assemble(self, tail: dict[str, np.ndarray] | None) -> None:
        """The step axis and the loss; the stat grids are made again when next asked for."""
        key = (tuple(self._parts), None if tail is None else len(tail["step"]))
        if key == self._assembled:
            return  # nothing new: the grids made so far stand
        self._assembled = key
        parts = [self._parts[k] for k in sorted(self._parts)]
        self._tail = tail
        self._stats, self._digests = {}, None
        step_chunks = [p.steps for p in parts]
        loss_chunks = [p.loss for p in parts]
        unknown_chunks = [p.loss_unknown for p in parts]
        if tail is not None:
            n = max(len(self.params), 1)
            step_chunks.append(tail["step"][::n])
            loss_chunks.append(tail["loss"][::n])
            unknown_chunks.append(tail["loss_unknown"][::n])
        if not step_chunks:
            return
        step = np.concatenate(step_chunks)
        steps = np.unique(step)
        loss = np.full(len(steps), np.nan)
        loss[np.searchsorted(steps, step)] = np.concatenate(loss_chunks)
        unknown = np.ones(len(steps), bool)
        unknown[np.searchsorted(steps, step)] = np.concatenate(unknown_chunks)
        self.steps, self.loss, self.loss_unknown = steps, loss, unknown

    def _grid(self, stat: str) -> np.ndarray:
        """(steps, params) of one stat from the parts (read now if not yet) and the tail."""
        n = len(self.params)
        grid = np.full((len(self.steps), n), np.nan, fmt.stat_dtype(stat))
        for name in sorted(self._parts):
            part = self._parts[name]
            values, step_of_row, param = part.stat(stat)
            if param is None or step_of_row is None:
                grid[np.searchsorted(self.steps, part.steps)] = values.reshape(-1, n)
            else:
                grid[np.searchsorted(self.steps, step_of_row), param] = values
        tail = self._tail
        if tail is not None:
            grid[np.searchsorted(self.steps, tail["step"]), tail["param"]] = tail[stat]
        return grid

    def _read_anomalies(self) -> list[Anomaly]:
        try:
            text = (self.path / fmt.ANOMALIES).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        found = []
        for line in text.split("\n")[:-1]:  # the last piece has no newline yet: not whole
            if line.strip():
                try:
                    found.append(Anomaly.from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError):
                    continue  # damaged line: the others still stand
        return found

    def _read_captures(self) -> list[int]:
        folder = self.path / fmt.CAPTURES
        if not folder.is_dir():
            return []
        return sorted(s for n in os.listdir(folder) if (s := fmt.capture_step(n)) is not None)


_ROWS = 256  # rows of the (steps, params) norms reduced at a time
