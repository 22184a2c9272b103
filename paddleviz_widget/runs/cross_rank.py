"""The cross-rank report of a multi-rank run (ranks.py): which rank and step first went
non-finite, parameters whose gradient is missing on some ranks only, and synchronised
gradients that differ across ranks. Read from each rank's per-step digest columns
(digest.py); a rank's per-parameter statistics only at the steps a finding names.

Rules:
- ``nonfinite``: the first step at which a rank's loss or gradients hold NaN/Inf. After
  DataParallel's all-reduce a NaN reaches every rank's gradients at that step, so the ranks
  named are those whose loss (per rank, not all-reduced) went non-finite there, else those
  whose gradients did.
- ``missing_grad``: at a step every rank recorded, a parameter without a gradient on some
  ranks and with one on others; or, at a step every rank captured in full, a parameter the
  backward graph of some ranks does not reach (DataParallel(find_unused_parameters=True) fills
  its gradient in); one finding per source and set of ranks without it, at its first step.
- ``unsynced``: ranks with the same parameters without gradient but different digests at a
  step: their gradients differ where all-reduce makes them bitwise equal. Not at a step whose
  backward every rank ran under DataParallel.no_sync() and whose gradients the next backward
  added up (gradient accumulation, run.json's ``no_sync``). Claimed only when
  some step shows the ranks equal (the run synchronises at all: not so under tensor or
  pipeline parallelism, said in the notes instead); the size is the largest relative
  difference of a parameter's gradient norm across the ranks.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from . import format as fmt
from .params import ParamInfo

KINDS = ("nonfinite", "missing_grad", "unsynced")
_BLOCK = 64  # steps unpacked at a time (ranks x steps x params booleans)


@dataclass(frozen=True)
class RankFinding:
    kind: str  # one of KINDS
    step: int  # the first step it is seen
    ranks: list[int]  # nonfinite: the first rank(s); missing_grad: ranks WITHOUT the
    # gradient; unsynced: the ranks that differ
    layer: str
    params: list[str] = field(default_factory=list)
    value: float | None = None  # unsynced: the largest relative difference of the norms
    message: str = ""

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "ranks": list(self.ranks),
                "layer": self.layer, "params": list(self.params), "value": self.value,
                "message": self.message}  # fmt: skip


class RanksLike(Protocol):
    ranks: list[int]
    unrecorded: list[int]  # not recorded by choice (ranks=)
    params: list[ParamInfo]
    layers: list[str]
    notes: list[str]

    def steps_of(self, r: int) -> dict[str, np.ndarray]: ...
    def read_all(self) -> None: ...
    def rank(self, r: int) -> Any: ...
    def rank_dir(self, r: int) -> Path: ...
    def no_sync(self, r: int) -> dict[int, bool | None]: ...


def _names(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _ranks(ranks: list[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {_names([str(r) for r in ranks], 8)}"


def _layers_of(run: RanksLike, names: list[str]) -> list[str]:
    layer = {p.name: p.layer for p in run.params}
    return list(dict.fromkeys(layer[n] for n in names if n in layer))


def report(run: RanksLike) -> list[RankFinding]:
    run.read_all()
    steps = {r: run.steps_of(r) for r in run.ranks}
    found = _nonfinite(run, steps)
    if len(run.ranks) > 1:
        common = steps[run.ranks[0]]["step"]
        for r in run.ranks[1:]:
            common = np.intersect1d(common, steps[r]["step"])
        rows = {r: np.searchsorted(steps[r]["step"], common) for r in run.ranks}
        bits = np.stack([steps[r]["missing_bits"][rows[r]] for r in run.ranks])  # (R, S, B)
        digest = np.stack([steps[r]["digest"][rows[r]] for r in run.ranks])  # (R, S)
        found += _missing_findings(run, _missing(run, common, bits), _missing_in_graphs(run))
        found += _unsynced(run, common, bits, digest)
    return found


def _nonfinite(run: RanksLike, steps: dict[int, dict[str, np.ndarray]]) -> list[RankFinding]:
    first: dict[int, int] = {}
    bad_loss = {r: _bad_loss(s["loss"]) for r, s in steps.items()}
    for r, s in steps.items():
        hit = np.flatnonzero(bad_loss[r] | (s["nonfinite"] > 0))
        if len(hit):
            first[r] = int(s["step"][hit[0]])
    if not first:
        return []
    step = min(first.values())
    at = [r for r in run.ranks if first.get(r) == step]
    by_loss = [r for r in at if bad_loss[r][int(np.searchsorted(steps[r]["step"], step))]]
    named = by_loss or at
    r0 = named[0]
    log = run.rank(r0)
    nan, inf = log.param_row("nan", step), log.param_row("inf", step)
    params = [p.name for p, a, b in zip(run.params, nan, inf) if (a > 0) or (b > 0)]
    layers = _layers_of(run, params)
    losses = ", ".join(f"rank {r}: {float(_at(steps[r], 'loss', step)):g}" for r in by_loss)
    words = [f"step {step}: {_ranks(named)} went non-finite first"]
    # ranks the job chose not to record (ranks=): the all-reduce may have brought it from one
    unrecorded = run.unrecorded
    if not by_loss and len(named) == len(run.ranks) and unrecorded:
        words = [
            f"step {step}: NaN/Inf gradients on every recorded rank at once and no recorded "
            "rank's loss non-finite: DataParallel's all-reduce gives one rank's NaN/Inf to "
            f"all, so it likely came from {_ranks(unrecorded)}, not recorded (the job's "
            "ranks=), or from a NaN/Inf input or activation that did not reach the loss"
        ]
    elif not by_loss and len(named) == len(run.ranks) > 1:  # every rank, none by its loss
        words = [
            f"step {step}: NaN/Inf gradients on every rank at once and no rank's loss "
            "non-finite: DataParallel's all-reduce gives one rank's NaN/Inf to all, so the "
            "rank it came from is not in the logs (a NaN/Inf input or activation that did not "
            "reach the loss, e.g. cut off by a ReLU or a mask: check each rank's batch)"
        ]
    if by_loss:
        words.append(f"its loss is non-finite ({losses})" if len(by_loss) == 1 else
                     f"their losses are non-finite ({losses})")  # fmt: skip
    grads = [r for r in run.ranks if first.get(r) == step and _at(steps[r], "nonfinite", step)]
    if params:
        words.append(
            f"NaN/Inf gradients on {_ranks(grads)} in layer{'s' if len(layers) > 1 else ''} "
            f"{_names([x or '(model)' for x in layers], 3)}, {len(params)} parameter"
            f"{'s' if len(params) > 1 else ''} on rank {r0}: {_names(params)}"
        )
    return [RankFinding("nonfinite", step, named, layers[0] if layers else "", params, None,
                        "; ".join(words))]  # fmt: skip


def _bad_loss(loss: Any) -> np.ndarray:
    """Non-finite losses. The reader's NaN is also "loss not known" (backward not started
    from one loss value): a NaN counts only in a rank whose loss is known at other steps."""
    loss = np.asarray(loss, np.float64)
    known = bool(np.isfinite(loss).any())
    return np.isinf(loss) | (np.isnan(loss) & known)


def _at(s: dict[str, np.ndarray], key: str, step: int) -> Any:
    return s[key][int(np.searchsorted(s["step"], step))]


Without = dict[int, tuple[int, tuple[int, ...]]]  # parameter -> (first step, ranks without)


def _missing(run: RanksLike, common: np.ndarray, bits: np.ndarray) -> Without:
    """From the digests: parameters with no gradient on some ranks, with one on others."""
    n = len(run.params)
    differ = np.flatnonzero((bits != bits[:1]).any(axis=(0, 2)))
    without: Without = {}
    for b in range(0, len(differ), _BLOCK):
        idx = differ[b : b + _BLOCK]
        absent = np.unpackbits(bits[:, idx], axis=2, count=n).astype(bool)  # (R, s, P)
        mixed = absent.any(0) & ~absent.all(0)  # (s, P)
        for k, p in zip(*np.nonzero(mixed)):
            if int(p) not in without:
                ranks = tuple(run.ranks[i] for i in np.flatnonzero(absent[:, k, p]))
                without[int(p)] = (int(common[idx[k]]), ranks)
    return without


def _missing_in_graphs(run: RanksLike) -> Without:
    """From the full captures (captures/unreached.jsonl): parameters some ranks' backward
    graphs do not reach at a step others' do. DataParallel(find_unused_parameters=True)
    all-reduces zeros into them, so every rank holds the same gradient and the digests agree:
    only the graphs show the branch."""
    index = {p.name: i for i, p in enumerate(run.params)}
    per = {r: _unreached(run.rank_dir(r) / fmt.CAPTURES / fmt.UNREACHED) for r in run.ranks}
    steps = set.intersection(*(set(d) for d in per.values())) if per else set()
    without: Without = {}
    for step in sorted(steps):
        for name in set().union(*(per[r][step] for r in run.ranks)):
            ranks = tuple(r for r in run.ranks if name in per[r][step])
            if len(ranks) < len(run.ranks) and name in index and index[name] not in without:
                without[index[name]] = (step, ranks)
    return without


def _unreached(path: Path) -> dict[int, set[str]]:
    """step -> parameter names, from one rank's index; a line cut off by a crash is skipped."""
    out: dict[int, set[str]] = {}
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as f:
        for line in f:
            with contextlib.suppress(ValueError, TypeError, KeyError):
                record = json.loads(line)
                out[int(record["step"])] = {str(n) for n in record["params"]}
    return out


def _missing_findings(run: RanksLike, by_grads: Without, by_graphs: Without) -> list[RankFinding]:
    """One finding per source and set of ranks without the gradient, at its first step."""
    found = []
    for source in (by_grads, {p: v for p, v in by_graphs.items() if p not in by_grads}):
        groups: dict[tuple[int, ...], list[int]] = {}
        for p in sorted(source):
            groups.setdefault(source[p][1], []).append(p)
        for ranks_without, ps in groups.items():
            names = [run.params[p].name for p in ps]
            layers = _layers_of(run, names)
            step = min(source[p][0] for p in ps)
            with_ = [r for r in run.ranks if r not in ranks_without]
            what = (f"{len(names)} parameter{'s' if len(names) > 1 else ''} of layer"
                    f"{'s' if len(layers) > 1 else ''} "
                    f"{_names([x or '(model)' for x in layers], 3)}")  # fmt: skip
            if source is by_grads:
                how = (f"without a gradient on {_ranks(list(ranks_without))} but with one on "
                       f"{_ranks(with_)}: {_names(names)} (a branch not every rank takes: "
                       "DataParallel needs find_unused_parameters=True for it, else the job "
                       "hangs or fails)")  # fmt: skip
            else:
                how = (f"not reached by the backward graph of {_ranks(list(ranks_without))} but "
                       f"reached on {_ranks(with_)}: {_names(names)} (a branch not every rank "
                       "takes; DataParallel(find_unused_parameters=True) gives them the "
                       "all-reduced gradient all the same, so their norms do not show "
                       "it)")  # fmt: skip
            found.append(RankFinding("missing_grad", step, list(ranks_without),
                                     layers[0] if layers else "", names, None,
                                     f"step {step}: {what} {how}"))  # fmt: skip
    return sorted(found, key=lambda f: f.step)


def _unsynced(
    run: RanksLike, common: np.ndarray, bits: np.ndarray, digest: np.ndarray
) -> list[RankFinding]:
    """Steps where ranks with equal missing bits have different digests."""
    if not len(common):
        return []
    # At each step, the ranks with the same parameters without gradient are compared: do they
    # ever agree (the run synchronises), and where do they not?
    compared = np.zeros(len(common), bool)
    mismatch = np.zeros(len(common), bool)
    agree = np.zeros(len(common), bool)
    uniform = (bits == bits[:1]).all(axis=(0, 2))
    compared[uniform] = True  # the usual step: every rank in one group
    on_purpose, dropped = _no_sync_steps(run, common)
    compared[on_purpose] = uniform[on_purpose] = False  # local by design: not compared
    mismatch[uniform] = (digest[:, uniform] != digest[:1, uniform]).any(0)
    agree[uniform] = ~mismatch[uniform]
    for s in np.flatnonzero(~uniform & ~on_purpose):
        keys = [bits[i, s].tobytes() for i in range(len(run.ranks))]
        for key in set(keys):
            members = [i for i, k in enumerate(keys) if k == key]
            if len(members) > 1:
                compared[s] = True
                same = len({int(digest[i, s]) for i in members}) == 1
                mismatch[s] |= not same
                agree[s] |= same
    if compared.any() and not agree.any():
        run.notes.append(
            "the ranks' gradients differ at every step: not synchronised by data parallelism "
            "(tensor or pipeline parallel, or separate runs), so no 'unsynced' finding"
        )
        return []
    hits = np.flatnonzero(mismatch)
    if not len(hits):
        return []
    s = int(hits[0])
    step = int(common[s])
    values, counts = np.unique(digest[:, s], return_counts=True)
    top = values[counts == counts.max()]
    differ = (run.ranks if len(top) > 1 else
              [r for i, r in enumerate(run.ranks) if digest[i, s] != top[0]])  # fmt: skip
    norms = np.stack([run.rank(r).param_row("norm", step) for r in run.ranks])  # (R, P)
    present = ~np.isnan(norms).any(0)
    hi, lo = np.nanmax(norms, 0), np.nanmin(norms, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(present & (hi != lo), (hi - lo) / np.maximum(np.abs(hi), 1e-30), 0.0)
    params_i = np.flatnonzero(rel > 0)
    order = params_i[np.argsort(-rel[params_i], kind="stable")]
    names = [run.params[p].name for p in order]
    value = float(rel[order[0]]) if len(order) else 0.0
    layer = run.params[order[0]].layer if len(order) else ""
    more = len(hits) - 1
    ahead = _ahead(run, step) if more else None
    if ahead is not None:  # the later "differences" are its steps numbered ahead
        r, d = ahead
        differ, more = [r], 0
    message = (
        f"step {step}: synchronised gradients differ across {_ranks(differ)}"
        + (f" in {len(names)} parameter{'s' if len(names) > 1 else ''}, most in layer "
           f"{layer or '(model)'}: {_names(names)}" if names else
           " (their NaN/Inf counts differ)")
        + f"; largest relative difference of a gradient norm {value:.3g}"
        + (f"; {more} later step{'s' if more > 1 else ''} differ too" if more else "")
        + (f"; rank {ahead[0]} ran {ahead[1]} backward{'s' if ahead[1] > 1 else ''} more at "
           f"step {step}: its steps from {step + ahead[1]} on are the others' from {step} on, "
           f"equal (its step numbers run {ahead[1]} ahead)" if ahead else "")
        + (" (a backward under DataParallel.no_sync() whose gradients were then stepped on "
           "or cleared before a synchronised backward added them up)" if dropped[s] else
           " (a gradient that escaped the all-reduce, e.g. an optimizer step inside "
           "DataParallel.no_sync())")
    )  # fmt: skip
    return [RankFinding("unsynced", step, differ, layer, names, value, message)]


def _ahead(run: RanksLike, step: int) -> tuple[int, int] | None:
    """(rank, d): the one rank that ran d backwards more at ``step`` (a probe, a retried
    micro-batch: step numbers count backwards), told by its digests from step + d on
    equalling every other rank's from ``step`` on; None if no rank's do."""
    for r in run.ranks:
        mine = run.steps_of(r)
        for d in (1, 2, 3):
            pairs, equal = 0, True
            for q in (q for q in run.ranks if q != r):
                theirs = run.steps_of(q)
                later = theirs["step"] >= step
                want = theirs["step"][later] + d
                at = np.searchsorted(mine["step"], want)
                inside = at < len(mine["step"])
                at, want = at[inside], want[inside]
                found = mine["step"][at] == want
                same = mine["digest"][at] == theirs["digest"][later][inside]
                equal &= bool(found.all() and same.all())
                pairs += int(found.sum())
            if equal and pairs:
                return r, d
    return None


def _no_sync_steps(run: RanksLike, common: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At each common step: every rank ran its backward under DataParallel.no_sync() and kept
    the gradients for the next one (gradient accumulation: local on purpose); some rank's
    no_sync gradients were stepped on or cleared instead (run.json's ``no_sync``, no_sync.py)."""
    on_purpose = np.ones(len(common), bool)
    dropped = np.zeros(len(common), bool)
    for r in run.ranks:
        local = run.no_sync(r)
        on_purpose &= np.array([local.get(int(s), False) is not False for s in common], bool)
        dropped |= np.array([local.get(int(s)) is False and int(s) in local for s in common])
    return on_purpose & ~dropped, dropped
