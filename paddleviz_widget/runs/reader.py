"""``open_run(path)``: a run log (format.py) as arrays, also while its writer is still going;
``refresh()`` reads what it appended since. The run explorer uses only this API
(/work/notes/run-contract.md)."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..graph.model import Graph
from . import format as fmt
from .anomaly import Anomaly
from .errors import RunLogError
from .params import ParamInfo
from .status import effective_status

__all__ = ["Anomaly", "ParamInfo", "RunLog", "RunLogError", "open_run"]

_INT_STATS = ("nan", "inf")


def open_run(path: str | os.PathLike[str]) -> RunLog:
    """The run log in directory ``path``; RunLogError names the path and the fix."""
    return RunLog(Path(path))


def read_meta(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise RunLogError(
            f"no run log at {path}: the directory does not exist. Pass the run_dir given to "
            "trace(..., run_dir=) or to --run-dir"
        )
    if not path.is_dir():
        raise RunLogError(f"{path} is a file, not a run log: pass the run directory "
                          "(the one holding run.json)")  # fmt: skip
    meta_path = path / fmt.META
    if not meta_path.exists():
        if not any(path.iterdir()):
            raise RunLogError(
                f"{path} is empty: no run has written to it yet (trace(..., run_dir=) writes "
                "run.json when its block starts). Check the path, or open it again once the "
                "run has started"
            )
        raise RunLogError(
            f"{path} is not a run log (no {fmt.META}): pass the directory given to "
            "trace(..., run_dir=) or --run-dir"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunLogError(
            f"{meta_path} cannot be read as JSON ({exc}): it was not written by "
            "paddleviz_widget or was damaged; the run's summaries in "
            f"{path / fmt.STEPS} are Parquet files that pandas still reads"
        ) from None
    version = meta.get("run_schema") if isinstance(meta, dict) else None
    if not isinstance(version, str):
        raise RunLogError(
            f"{meta_path} has no run_schema: {path} is not a paddleviz_widget run log"
        )
    major = version.split(".")[0]
    if not major.isdigit() or int(major) > fmt.READS_MAJOR:
        raise RunLogError(
            f"{path} was written by a newer paddleviz_widget (run_schema {version}; this one "
            f"reads {fmt.READS_MAJOR}.x): upgrade it (pip install -U paddleviz_widget)"
        )
    for key in ("params", "layers", "every"):
        if key not in meta:
            raise RunLogError(f"{meta_path} lacks '{key}': the file was damaged or not written "
                              "by paddleviz_widget")  # fmt: skip
    _check_meta(meta, meta_path)
    return meta


def _check_meta(meta: dict[str, Any], meta_path: Path) -> None:
    """The fields the reader uses, of the types the writer writes (else: damaged, said so)."""

    def bad(field: str, what: str) -> RunLogError:
        return RunLogError(
            f"{meta_path}: '{field}' is not {what}: the file was damaged or not written by "
            "paddleviz_widget; the summaries under steps/ are Parquet files pandas still reads"
        )

    layers = meta["layers"]
    if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
        raise bad("layers", "a list of layer paths")
    if type(meta["every"]) is not int:
        raise bad("every", "an integer")
    params = meta["params"]
    if not isinstance(params, list):
        raise bad("params", "a list")
    known = set(layers)
    for k, entry in enumerate(params):
        try:
            info = ParamInfo.from_json(entry)
        except (KeyError, TypeError, ValueError):
            raise bad(f"params[{k}]", "{name, layer, shape, dtype}") from None
        if info.layer not in known:
            raise bad(f"params[{k}].layer", "one of 'layers'")
    for key, kind, what in (("status", str, "a string"), ("thresholds", dict, "an object")):
        if key in meta and not isinstance(meta[key], kind):
            raise bad(key, what)


class RunLog:
    """A run log, read. Arrays are by recorded step (rows) and parameter or layer (columns)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.meta = read_meta(path)
        self.params = [ParamInfo.from_json(p) for p in self.meta["params"]]
        self.layers: list[str] = list(self.meta["layers"])
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self._layer_of = np.array([self.layers.index(p.layer) for p in self.params], np.int64)
        self._parts: dict[str, Any] = {}  # part file name -> its decoded columns
        self.steps = np.zeros(0, np.int64)
        self.loss = np.zeros(0, np.float64)
        self._stats = {s: np.zeros((0, len(self.params)), np.float32) for s in fmt.STATS}
        self.anomalies: list[Anomaly] = []
        self.captured_steps: list[int] = []
        self._signature: tuple[Any, ...] = ()
        self.refresh()

    # -- contract ---------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read what the writer added since; True if anything is new."""
        if (self.path / fmt.META).exists():
            meta = read_meta(self.path)
            meta["status"] = effective_status(meta)
            self.meta = meta
        else:
            self.meta["status"] = effective_status(self.meta)
        tail = self._read_tail()  # before the parts: a part written meanwhile holds its steps
        for name in sorted(os.listdir(self.path / fmt.STEPS)) if self._has_steps() else ():
            if name.endswith(".parquet") and name.startswith("part-") and name not in self._parts:
                self._parts[name] = self._read_part(self.path / fmt.STEPS / name)
        self._assemble(tail)
        self.anomalies = self._read_anomalies()
        self.captured_steps = self._read_captures()
        signature = (len(self.steps), len(self.anomalies), tuple(self.captured_steps),
                     self.meta.get("status"))  # fmt: skip
        changed = signature != self._signature
        self._signature = signature
        return changed

    def param_stat(self, stat: str) -> np.ndarray:
        """float32 (steps, params): "norm", "max_abs", "nan" or "inf"; NaN where a parameter
        had no gradient at that step."""
        if stat not in self._stats:
            raise ValueError(f"stat must be one of {', '.join(fmt.STATS)}, got {stat!r}")
        return self._stats[stat]

    def layer_norm(self) -> np.ndarray:
        """float32 (steps, layers): the L2 norm over each layer's parameters' gradients (NaN
        where none of them had a gradient)."""
        norm = self._stats["norm"].astype(np.float64)
        out = np.full((len(self.steps), len(self.layers)), np.nan)
        squares = np.where(np.isnan(norm), 0.0, norm * norm)
        for j in range(len(self.layers)):
            cols = self._layer_of == j
            if not cols.any():
                continue
            present = ~np.isnan(norm[:, cols])
            some = present.any(axis=1)
            out[some, j] = np.sqrt(squares[:, cols].sum(axis=1))[some]
        return out.astype(np.float32)

    def graph(self, step: int) -> dict[str, Any]:
        """The graph document (schema 2.x) of a fully captured step."""
        path = self.path / fmt.CAPTURES / fmt.capture_name(int(step))
        if not path.exists():
            shown = ", ".join(map(str, self.captured_steps[:20])) or "none yet"
            raise RunLogError(f"step {step} of {self.path} has no full capture; captured steps: "
                              f"{shown}")  # fmt: skip
        try:
            document = json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            raise RunLogError(f"{path} cannot be read ({exc}): the file was damaged; the "
                              "step's summary is still in the run log") from None  # fmt: skip
        try:
            Graph.from_dict(document)  # the one document check (graph/check.py)
        except ValueError as exc:
            raise RunLogError(
                f"{path} holds no valid graph document ({exc}): the file was damaged; the "
                "step's summary is still in the run log"
            ) from None
        return document

    def problems(self) -> list[Anomaly]:
        return list(self.anomalies)

    def summary_frame(self) -> Any:
        """The per-step rows as a pandas DataFrame (the format's long rows)."""
        import pandas as pd

        s, p = np.meshgrid(self.steps, np.arange(len(self.params)), indexing="ij")
        cols: dict[str, Any] = {
            "step": s.ravel(),
            "param": np.array([q.name for q in self.params], object)[p.ravel()],
        }
        cols.update({k: v.ravel() for k, v in self._stats.items()})
        return pd.DataFrame(cols)

    # -- reading ----------------------------------------------------------------------------
    def _has_steps(self) -> bool:
        return (self.path / fmt.STEPS).is_dir()

    def _read_part(self, path: Path) -> dict[str, np.ndarray]:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises its own types for a damaged file
            raise RunLogError(
                f"{path} cannot be read as Parquet ({exc}): it was damaged after it was "
                "written (parts are renamed into place whole); move it away to read the rest"
            ) from None
        return self._columns(table)

    def _read_tail(self) -> dict[str, np.ndarray] | None:
        """The steps not yet in a part; a line cut off mid-write is not read."""
        try:
            # errors="replace": damaged bytes spoil their line only (which then is not read)
            text = (self.path / fmt.TAIL).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None
        rows = []
        for line in text.split("\n")[:-1]:  # the last piece has no newline yet: not whole
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
        n = len(self.params)
        rows = [r for r in rows if _whole_row(r, n)]
        if not rows:
            return None
        out = {
            "step": np.repeat(np.array([int(r["step"]) for r in rows], np.int64), n),
            "param": np.tile(np.arange(n, dtype=np.int64), len(rows)),
            "loss": np.repeat(np.array([_loss(r.get("loss")) for r in rows], np.float64), n),
        }
        for stat in fmt.STATS:
            values = [np.nan if v is None else v for r in rows for v in r[stat]]
            out[stat] = np.array(values, np.float32)
        return out

    def _columns(self, table: Any) -> dict[str, np.ndarray]:
        import pyarrow as pa

        param = table.column("param").combine_chunks()
        if not pa.types.is_dictionary(param.type):
            param = param.dictionary_encode()
        names = param.dictionary.to_pylist()
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise RunLogError(
                f"{self.path}: rows name parameters {unknown[:3]} that {fmt.META} does "
                "not list: the files are from different runs"
            )
        lookup = np.array([self._index[n] for n in names], np.int64)
        out = {
            "step": table.column("step").to_numpy(),
            "param": lookup[param.indices.to_numpy(zero_copy_only=False)],
            "loss": table.column("loss").to_numpy(zero_copy_only=False),
        }
        for stat in fmt.STATS:
            col = table.column(stat).cast("float32").fill_null(float("nan"))
            out[stat] = col.to_numpy()
        return out

    def _assemble(self, tail: dict[str, np.ndarray] | None) -> None:
        chunks = [self._parts[k] for k in sorted(self._parts)]
        if tail is not None:
            chunks.append(tail)
        if not chunks:
            return
        step = np.concatenate([c["step"] for c in chunks])
        steps = np.unique(step)
        rows = np.searchsorted(steps, step)
        n = len(self.params)
        for stat in fmt.STATS:
            grid = np.full((len(steps), n), np.nan, np.float32)
            grid[rows, np.concatenate([c["param"] for c in chunks])] = np.concatenate(
                [c[stat] for c in chunks]
            )
            self._stats[stat] = grid
        loss = np.full(len(steps), np.nan)
        loss[rows] = np.concatenate([c["loss"] for c in chunks])
        self.steps, self.loss = steps, loss

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
