"""What the run explorer is sent of a multi-rank run (ranks.py) beside the shown rank's run
log (view_data.py): the ranks, notes and cross-rank report as JSON (``ranks_description``),
the rank x layer gradient norms at the picked step (``rank_norms``: float32 (R, L), -1 where a
rank had no gradient or did not record the step, NaN where a gradient held NaN/Inf, as the
heatmap's cells), and for a missing_grad finding the graph
difference between a rank without the gradient and one with it (``missing_grad_diff``),
drawn by the explorer's diff (graph/diff.py, js/view/diff.ts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cross_rank import RankFinding
from .ranks import RankedRun


def ranks_description(ranked: RankedRun, shown: int) -> dict[str, Any]:
    report = ranked.report()
    return {
        "ranks": list(ranked.ranks),
        "world_size": ranked.world_size,
        "run_id": ranked.run_id,
        "notes": list(ranked.notes),
        "report": [{**f.to_json(), "diff": f.kind == "missing_grad"} for f in report],
        "shown": shown,
        "running": ranked.live,  # the page refreshes while it is
    }


def opening(ranked: RankedRun) -> tuple[int, int]:
    """(rank, step) the explorer opens on: the first finding's, else ranks[0] and none."""
    report = ranked.report()
    if report and report[0].ranks:
        return report[0].ranks[0], report[0].step
    return ranked.ranks[0], -1


def rank_norms(ranked: RankedRun, step: int) -> bytes:
    norms, bad = ranked.layers_at(step)
    marked = np.where(np.isnan(norms), np.float32(-1), norms)
    marked[bad] = np.nan
    return np.ascontiguousarray(marked, dtype="<f4").tobytes()


def missing_grad_diff(ranked: RankedRun, finding: RankFinding) -> tuple[dict[str, Any], str]:
    """(diff document, title) of a rank without the finding's gradient against one with it,
    at the captured step of both nearest the finding's (at or after it first). Structure only
    (stats=False): the ranks' own batches make every statistic differ, NaN/Inf counts too.
    ValueError says why there is none."""
    from ..graph.diff import diff_graphs

    without = finding.ranks[0]
    having = [r for r in ranked.ranks if r not in finding.ranks]
    if not having:
        raise ValueError("every rank lacks these gradients: no rank to compare with")
    a, b = ranked.rank(without), ranked.rank(having[0])
    common = sorted(set(a.captured_steps) & set(b.captured_steps))
    if not common:
        raise ValueError(
            f"no step is captured in full on both rank {without} and rank {having[0]}: a "
            "graph difference needs both graphs (trace(every=N) captures every N-th step)"
        )
    step = min(common, key=lambda s: (s < finding.step, abs(s - finding.step)))
    labels = (f"rank {without} (without)", f"rank {having[0]} (with)")
    doc = diff_graphs(a.graph(step), b.graph(step), labels=labels, stats=False)
    title = (f"Graph difference at step {step}: rank {without} (without the gradient) -> rank "
             f"{having[0]} (with it); added = only on rank {having[0]}")  # fmt: skip
    return doc, title
