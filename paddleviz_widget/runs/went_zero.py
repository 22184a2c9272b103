"""A layer whose gradient went to exactly 0 and stays there: its weights learn nothing more.

A layer's norm of exactly 0 is idle for the summary rules (anomalies.py): ``clear_grad()``
leaves zeros in a layer the backward did not reach (a GAN's generator during the critic's
steps, an MoE expert no token went to, a backbone frozen mid-run), and the norms alone cannot
tell that from a backward that reaches the layer and sends it only zeros (a layer after it
whose weights were set to 0, dead ReLUs, a mask): so a run whose middle layer was zeroed
mid-training, everything before it then getting exactly 0 for good, reported nothing.

Here a layer that had a gradient at each of the last ``need`` steps (not one resting by turns)
and has exactly 0 at a step is a candidate; the next step is fully captured, and the graph's
own ``zero`` rule (graph/problems/zeros.py) decides: only when the backward still reaches its
parameters, sends them only zeros and the rule names it a problem (not an MoE expert run on no
tokens, not a frozen parameter, which the backward does not reach) is it reported, as
``vanishing`` at the step it started, with the op where the zeros start. A layer a capture showed
resting is never a candidate again: an MoE expert or a head resting now and then costs one
extra capture for the run, not one each time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .anomaly import Anomaly, names_shown
from .params import ParamInfo


class WentZero:
    def __init__(self, params: list[ParamInfo], layers: list[str], need: int):
        self.layers = layers
        self._need = need
        self._index = {
            j: [i for i, p in enumerate(params) if p.layer == layer]
            for j, layer in enumerate(layers)
        }
        self._names = [p.name for p in params]
        self._last_zero = np.full(len(layers), -1, np.int64)  # the last rule step at 0
        self._seen = 0  # the finder's finite steps already looked at
        self.pending: list[int] = []  # candidate layers of the step before
        self._from = -1  # the training step they went to 0 at
        self.nonfinite_at = -1  # the last step a nonfinite anomaly started at (watch.py)
        # Layers a capture showed resting (not reached, or back at once): never candidates
        # again, so that an MoE expert or a head resting now and then costs one capture.
        self._rests = np.zeros(len(layers), bool)

    def after(self, step: int, seen: int, row: np.ndarray) -> None:
        """After a recorded step: ``seen``, ``row`` the finder's count of finite steps and
        the last one's layer norms (AnomalyFinder.last_row). Candidates of an earlier step
        not confirmed by now are dropped (confirm() runs before this)."""
        self.pending = []
        if seen == self._seen:
            return  # a NaN/Inf step: no row
        self._seen = seen
        if row.all():  # every layer and the total non-zero (NaN, no gradient, is truthy)
            return
        layers = row[:-1]
        at = seen - 1
        zero = layers == 0
        if row[-1] > 0:  # some layer has a gradient: not a step that touched nothing
            ran = at - self._last_zero - 1  # steps in a row with a gradient before this one
            self.pending = np.flatnonzero(zero & (ran >= self._need) & ~self._rests).tolist()
            self._from = step
        self._last_zero[zero] = at

    def confirm(self, step: int, norm: np.ndarray, document: dict[str, Any]) -> list[Anomaly]:
        """The pending candidates that the full capture of ``step`` (the next one) shows
        reached by the backward with only zeros, which its zero rule calls a problem."""
        if not self.pending or step != self._from + 1:
            return []
        from ..graph.model import Graph
        from ..graph.parts import GraphParts
        from ..graph.problems import find_problems

        graph = Graph.from_dict(document)
        parts = GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta)
        zeros = [p for p in find_problems(parts) if p.kind == "zero" and p.severity != "info"]
        found = []
        for j in self.pending:
            names = [self._names[i] for i in self._index[j]]
            back = any(norm[i] != 0 for i in self._index[j])  # a rest, not a layer cut off
            cause = next((p for p in zeros if set(names) & {p.name, *p.affected}), None)
            if back or cause is None:
                self._rests[j] = True
                continue
            where = (f"{cause.name} in layer {cause.layer or '(model)'}"
                     + (f" ({cause.site})" if cause.site else ""))  # fmt: skip
            why = "weights or outputs all zero there, dead ReLUs, a mask"
            if self.nonfinite_at >= 0:  # its update may have put NaN/Inf in the weights,
                # which a ReLU turns into zeros: the loss stays finite, the layer dead
                why = (f"NaN/Inf that step {self.nonfinite_at}'s update wrote into weights "
                       f"(a ReLU makes them 0), or {why}")  # fmt: skip
            found.append(Anomaly(
                self._from, "vanishing", self.layers[j], names, 0.0, 0.0,
                f"step {self._from}: vanishing gradient in layer {self.layers[j] or '(model)'}: "
                f"exactly 0 from this step, after a gradient at each of the {self._need} "
                f"steps or more before; the full capture of step {step} shows the backward "
                f"still reaching its parameters and sending them only zeros, which start at "
                f"{where} ({why}): its weights learn nothing more; parameters "
                f"{names_shown(names)}",
            ))  # fmt: skip
        self.pending = []
        return found
