"""A multi-rank run: RUN_DIR/rank-NNNNN/ logs, one per recorded rank of one launched job
(format.rank_dir), read side by side (/work/notes/rank-contract.md).

``open_ranks`` reads each rank's run.json only; a rank's own log (RunLog) is opened when it is
asked for (``rank(r)``), and what the cross-rank report compares (each step's digest, loss,
missing-gradient bits: digest.py) is read from one file per finished rank
(digests/all.parquet). Nothing is merged silently: ranks of different runs, world sizes or
rank lists that disagree, a rank missing that the job recorded, or logs of different models
raise RunLogError naming the ranks and the fix.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from . import format as fmt
from .cross_rank import RankFinding, report
from .digest_parts import read_digest_part
from .errors import RunLogError
from .meta_read import read_meta
from .params import ParamInfo
from .reader import RunLog
from .status import SameRun, effective_status, same_run, stopped_notes
from .status import span as _span

__all__ = ["RankFinding", "RankedRun", "is_ranked", "open_any", "open_ranks"]

_RANK_DIR = re.compile(re.escape(fmt.RANK_PREFIX) + r"(\d{5,})")
_STEP_COLUMNS = ["step", "loss", "digest", "missing", "nonfinite", "missing_bits"]


def _rank_dirs(path: Path) -> dict[int, Path]:
    if not path.is_dir():
        return {}
    found = {}
    for entry in os.scandir(path):
        m = _RANK_DIR.fullmatch(entry.name)
        if m and entry.is_dir():
            found[int(m.group(1))] = Path(entry.path)
    return found


def _meta_like(path: Path, first: dict[str, Any] | None) -> dict[str, Any]:
    """A rank's run.json. The first is checked field by field (meta_read.read_meta); the others,
    when their params and layers are the first's, only parsed (orjson when installed: 64
    ranks of 1,000 parameters are ~0.4 s with json and the checks)."""
    if first is not None:
        try:
            import orjson

            meta = orjson.loads((path / fmt.META).read_bytes())
        except Exception:  # noqa: BLE001 - no orjson, a missing or damaged file: checked below
            meta = None
        if (
            isinstance(meta, dict)
            and meta.get("run_schema") == first.get("run_schema")
            and meta.get("params") == first["params"]
            and meta.get("layers") == first["layers"]
            and type(meta.get("every")) is int
        ):
            return meta
    return read_meta(path)


def is_ranked(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds rank-NNNNN/ logs (a multi-rank job's run dir)."""
    p = Path(path)
    return not (p / fmt.META).exists() and bool(_rank_dirs(p))


def open_any(path: str | os.PathLike[str]) -> RunLog | RankedRun:
    """A multi-rank run when ``path`` holds rank-NNNNN/ logs, else the run log there."""
    path = Path(path).expanduser()  # ~: as pandas reads it too
    return open_ranks(path) if is_ranked(path) else RunLog(path)


def open_ranks(path: str | os.PathLike[str]) -> RankedRun:
    """The multi-rank run in ``path``; RunLogError names the ranks concerned and the fix."""
    return RankedRun(Path(path).expanduser())


def _by_value(metas: dict[int, dict[str, Any]], key: str) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for r, meta in metas.items():
        groups.setdefault(repr(meta.get(key)), []).append(r)
    return groups


class RankedRun:
    """The recorded ranks of one job. ``ranks`` ascending; ``notes``: one line each for ranks
    not recorded by choice, ranks still being written (read up to their last step) and ranks
    not started yet while others run (``waiting``: read by refresh() once they appear)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        made = _rank_dirs(path)
        # A rank directory without run.json is a rank whose log has not begun (refresh() reads
        # it once it has): its process is starting, or stopped first (killed while starting).
        dirs = {r: d for r, d in made.items() if (d / fmt.META).exists()}
        if made and not dirs:
            raise RunLogError(
                f"{path}: no rank's log has begun ({_listed_dirs(made)} hold"
                f"{'s' if len(made) == 1 else ''} no {fmt.META}): "
                "the ranks are starting (open again in a moment) or stopped before their "
                "first step (each rank's output, the launcher's log/workerlog.N, says why)"
            )
        if not dirs:
            if (path / fmt.META).exists():
                raise RunLogError(f"{path} is a single-rank run log, not a multi-rank one: "
                                  "open it with open_run")  # fmt: skip
            read_meta(path)  # its own words for a missing, empty or foreign directory
            raise RunLogError(f"{path} holds no {fmt.RANK_PREFIX}NNNNN directory: pass the "
                              "run dir a multi-rank job wrote to")  # fmt: skip
        self._dirs = dirs
        self._same = SameRun()
        metas: dict[int, dict[str, Any]] = {}
        for r, d in sorted(dirs.items()):
            try:
                metas[r] = _meta_like(d, metas[min(metas)] if metas else None)
            except RunLogError as exc:
                raise RunLogError(f"rank {r}: {exc}") from None
            if metas[r].get("rank") != r:
                raise RunLogError(f"{d / fmt.META} says rank {metas[r].get('rank')!r}, its "
                                  f"directory rank {r}: it was moved or copied there; put "
                                  "each rank's log in its own rank-NNNNN")  # fmt: skip
        self._metas = metas
        self.waiting = self._check(metas)
        if self.waiting and not self._running():
            raise RunLogError(self._missing_message(self.waiting))
        first = metas[min(metas)]
        self.run_id: str = str(first.get("run_id"))
        self.world_size: int = int(first.get("world_size") or 1)
        self.ranks: list[int] = sorted(metas)
        self.params = [ParamInfo.from_json(p) for p in first["params"]]
        self.layers: list[str] = list(first["layers"])
        self._chosen: list[str] = []
        recorded = first.get("ranks")
        self.unrecorded: list[int] = []  # the ranks the job chose not to record (ranks=)
        if recorded is not None and len(recorded) < self.world_size:
            others = self.unrecorded = sorted(set(range(self.world_size)) - set(recorded))
            self._chosen.append(f"rank{'s' if len(others) > 1 else ''} {_span(others)} not "
                                f"recorded: the job chose ranks={_span(recorded)}")  # fmt: skip
        self._logs: dict[int, RunLog] = {}
        self._steps: dict[int, dict[str, np.ndarray]] = {}
        self._report: list[RankFinding] | None = None
        self.notes: list[str] = []
        self._note_state()

    def _check(self, metas: dict[int, dict[str, Any]]) -> list[int]:
        """Raise for ranks of other runs, world sizes, rank lists or models; the ranks the
        job records that are not there."""
        fix = ("each launched job needs a run dir of its own: move the other job's "
               f"{fmt.RANK_PREFIX}NNNNN directories out of {self.path}")  # fmt: skip
        for key, what in (("run_id", "runs"), ("world_size", "world sizes")):
            groups = _by_value(metas, key)
            if len(groups) > 1:
                shown = "; ".join(f"{key} {v}: rank{'s' if len(rs) > 1 else ''} {_span(rs)}"
                                  for v, rs in groups.items())  # fmt: skip
                raise RunLogError(f"{self.path} holds ranks of different {what} ({shown}): "
                                  f"{fix}")  # fmt: skip
        groups = _by_value(metas, "ranks")
        if len(groups) > 1:
            shown = "; ".join(f"ranks={v}: {_span(rs)}" for v, rs in groups.items())
            raise RunLogError(f"{self.path}: its ranks disagree about which ranks the job "
                              f"records ({shown}): {fix}")  # fmt: skip
        first = metas[min(metas)]
        names = [p.get("name") for p in first["params"]]
        other = [r for r, m in metas.items() if [p.get("name") for p in m["params"]] != names]
        if other or any(m["layers"] != first["layers"] for m in metas.values()):
            raise RunLogError(f"{self.path}: rank{'s' if len(other) > 1 else ''} "
                              f"{_span(other) or '?'} record other parameters or layers than "
                              f"rank {min(metas)}: not one model's ranks; {fix}")  # fmt: skip
        world = int(first.get("world_size") or 1)
        recorded = first.get("ranks")
        expected = set(range(world) if recorded is None else recorded)
        stray = sorted(set(metas) - set(range(world)))
        if stray:
            raise RunLogError(f"{self.path}: rank{'s' if len(stray) > 1 else ''} {_span(stray)} "
                              f"beyond world size {world}: {fix}")  # fmt: skip
        return sorted(expected - set(metas))

    def _missing_message(self, missing: list[int]) -> str:
        first = self._metas[min(self._metas)]
        world, recorded = int(first.get("world_size") or 1), first.get("ranks")
        return (
            f"{self.path}: rank{'s' if len(missing) > 1 else ''} {_span(missing)} of world "
            f"size {world} missing (ranks {_span(sorted(self._metas))} are there; the job "
            f"records {'all ranks' if recorded is None else 'ranks ' + _span(recorded)}): "
            "a rank that has not started yet (open again once it has), that stopped before "
            "its log began (its output, the launcher's log/workerlog.N, says why), or whose "
            f"directory is on another machine's disk (copy it here); one rank alone opens "
            f"with open_run({str(fmt.rank_dir(self.path, min(self._metas)))!r})"
        )

    def _running(self) -> list[int]:
        return [r for r, m in self._metas.items() if effective_status(m) == "running"]

    @property
    def live(self) -> bool:
        """Some rank is still being written, or has not started while others run: refresh()
        has more to read."""
        return bool(self.waiting or self._running())

    def _note_state(self) -> None:
        """``notes`` from the ranks' state now: chosen, stopped early, still being written,
        not started."""
        self.notes = list(self._chosen) + stopped_notes(self._metas)
        running, waiting = self._running(), self.waiting
        self._noted_running = running
        if running:
            self.notes.append(
                f"rank{'s' if len(running) > 1 else ''} {_span(running)} still being written: "
                "read up to the last step written so far (refresh() reads on)"
            )
        if waiting:
            self.notes.append(
                f"rank{'s' if len(waiting) > 1 else ''} {_span(waiting)} not started yet (no "
                f"{fmt.RANK_PREFIX}NNNNN/{fmt.META} while the others run): refresh() reads "
                f"{'them' if len(waiting) > 1 else 'it'} once there"
            )

    # -- one rank ---------------------------------------------------------------------------
    def rank(self, r: int) -> RunLog:
        """Rank ``r``'s log, opened on first use and kept."""
        if r not in self._metas:
            raise RunLogError(f"{self.path} has no rank {r}: its ranks are {_span(self.ranks)}")
        if r not in self._logs:
            self._same.check(self._dirs[r], self._metas[r])  # not a new run's rank r
            self._logs[r] = RunLog(self._dirs[r])
        return self._logs[r]

    def no_sync(self, r: int) -> dict[int, bool | None]:
        """Rank ``r``'s steps run under DataParallel.no_sync(): were their gradients kept for
        the next backward (run.json's ``no_sync``, runs/no_sync.py)?"""
        found = self._metas[r].get("no_sync")
        return {int(s): c for s, c in found} if isinstance(found, list) else {}

    def rank_dir(self, r: int) -> Path:
        """Where rank ``r``'s log is."""
        return self._dirs[r]

    def _whole(self, r: int) -> Path | None:
        """A finished rank's joined digests (digests/all.parquet), read without its RunLog."""
        if r in self._logs:
            return None
        path = self._dirs[r] / fmt.DIGESTS / fmt.DIGEST_ALL
        if effective_status(self._metas[r]) == "running" or not path.exists():
            return None
        self._same.check(self._dirs[r], self._metas[r])
        return path

    def read_all(self) -> None:
        """Every rank's steps_of, read side by side (Parquet reading leaves the GIL)."""
        from concurrent.futures import ThreadPoolExecutor

        todo = [r for r in self.ranks if r not in self._steps]
        if len(todo) > 1:
            with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
                for r, got in zip(todo, pool.map(self._read_steps, todo)):
                    self._steps[r] = got

    def _read_steps(self, r: int) -> dict[str, np.ndarray]:
        whole = self._whole(r)
        return _read_columns(whole, _STEP_COLUMNS) if whole is not None else self.steps_of(r)

    def steps_of(self, r: int) -> dict[str, np.ndarray]:
        """Rank ``r``'s per-step columns the report compares: step, loss, digest, missing,
        nonfinite, missing_bits (digest.py)."""
        got = self._steps.get(r)
        if got is None:
            whole = self._whole(r)
            if whole is not None:
                got = _read_columns(whole, _STEP_COLUMNS)
            else:
                log = self.rank(r)
                d = log.digests()
                got = {"step": log.steps, "loss": log.loss, **{k: d[k] for k in _STEP_COLUMNS[2:]}}
            self._steps[r] = got
        return got

    def layer_norm_at(self, step: int) -> np.ndarray:
        """float32 (ranks, layers): each rank's layer gradient norms at ``step`` (NaN: no
        gradient, or the rank did not record that step), rows in ``ranks`` order."""
        return self.layers_at(step)[0]

    def layers_at(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        """(layer_norm_at(step), bool (ranks, layers): the layer had NaN/Inf gradients)."""
        out = np.full((len(self.ranks), len(self.layers)), np.nan, np.float32)
        bad = np.zeros(out.shape, bool)
        for i, r in enumerate(self.ranks):
            steps = self.steps_of(r)["step"]
            at = int(np.searchsorted(steps, step))
            if at >= len(steps) or steps[at] != step:
                continue
            whole = self._whole(r)
            if whole is None:
                out[i], bad[i] = self.rank(r).layer_norm()[at], self.rank(r).layer_bad()[at]
            else:
                out[i], bad[i] = _row_of(whole, at, len(self.layers))
        return out, bad

    def report(self) -> list[RankFinding]:
        """Cross-rank findings, ordered: nonfinite, missing_grad, unsynced (cross_rank.py)."""
        if self._report is None:
            self._report = report(self)
            if self.waiting:  # "first" among the ranks read: say which are not
                unread = (f"; rank{'s' if len(self.waiting) > 1 else ''} {_span(self.waiting)} "
                          "not compared (not started yet)")  # fmt: skip
                self._report = [replace(f, message=f.message + unread) for f in self._report]
        return self._report

    def refresh(self) -> bool:
        """Read what running ranks appended, and ranks whose directory appeared since (a rank
        that started late); True if anything is new. RunLogError for a new rank of another
        run, world size or model, as at opening."""
        changed = self._new_ranks()
        grown = set()
        for r, log in self._logs.items():
            if log.refresh():
                grown.add(r)
            self._metas[r] = log.meta
        changed |= bool(grown)
        for r in [r for r in self._steps if r in grown]:
            del self._steps[r]  # read again when asked: the rank wrote steps or finished
        for r in [r for r in self._metas if r not in self._logs]:
            if effective_status(self._metas[r]) == "running":  # its run.json says when it ends
                meta = read_meta(self._dirs[r])
                same_run(self._dirs[r], self._metas[r], meta)
                changed |= meta != self._metas[r]
                self._metas[r] = meta
        # A rank killed since (SIGKILL, out of memory) leaves its run.json as it was: only its
        # process being gone says so, and notes must stop calling it still being written
        changed |= self._running() != self._noted_running
        if changed:
            self._report = None
            self._note_state()
        return changed

    def _new_ranks(self) -> bool:
        """Rank directories with a run.json that were not there before, checked against the
        others like at opening, then read like them."""
        dirs = _rank_dirs(self.path)
        new = {r: d for r, d in dirs.items() if r not in self._metas and (d / fmt.META).exists()}
        if not new:
            return False
        metas = dict(self._metas)
        first = metas[min(metas)]
        for r, d in sorted(new.items()):
            try:
                metas[r] = _meta_like(d, first)
            except RunLogError as exc:
                raise RunLogError(f"rank {r}: {exc}") from None
            if metas[r].get("rank") != r:
                raise RunLogError(f"{d / fmt.META} says rank {metas[r].get('rank')!r}, its "
                                  f"directory rank {r}: put each rank's log in its own "
                                  f"{fmt.RANK_PREFIX}NNNNN")  # fmt: skip
        self.waiting = self._check(metas)
        self._dirs.update(new)
        self._metas = metas
        self.ranks = sorted(metas)
        return True


def _read_columns(path: Path, columns: list[str]) -> dict[str, np.ndarray]:
    return read_digest_part(path, 0, columns)


def _row_of(path: Path, at: int, n_layers: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ``at`` of a joined digest file's layer norms and flags, reading its row group."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    start = 0
    for g in range(f.num_row_groups):
        rows = f.metadata.row_group(g).num_rows
        if at < start + rows:
            table = f.read_row_group(g, columns=["layer_norm", "layer_bad"])
            got = []
            for key in ("layer_norm", "layer_bad"):
                flat = table.column(key).combine_chunks().flatten().to_numpy()
                got.append(np.asarray(flat).reshape(rows, -1)[at - start, :n_layers])
            return got[0].astype(np.float32), got[1].astype(bool)
        start += rows
    return np.full(n_layers, np.nan, np.float32), np.zeros(n_layers, bool)


def _listed_dirs(dirs: dict[int, Path]) -> str:
    names = [d.name for _, d in sorted(dirs.items())]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
