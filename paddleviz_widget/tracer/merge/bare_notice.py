"""The notice of a traced graph whose edges still lack a gradient shape: why, in words.

Two causes, told apart by whether the traced backward left Paddle's log (before Paddle 3.3 it
is the only account: no replay is paired with the graph):
- no log: no backward() of this graph ran inside its trace(), or it ran after the graph was
  freed. The advice is where to call it;
- a log: that backward ran, traced, and its log names no gradient on those edges. Paddle 2.6
  and 3.0 log nothing an ``add_n`` backward sends ("{ Input: [" and no outputs), so a graph
  summing layers' outputs with paddle.add_n got the first notice's advice, which was wrong:
  the backward had run inside trace(). The notice names the ops the bare edges leave.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..read.walk import WalkResult
from .annotate import Annotations

TRACED_BARE_NOTICE = (
    "{n} edge(s) have no gradient shape: no backward() of this graph ran inside its trace()'s "
    "`with` block, or it ran after the graph was freed; build the graph before backward()."
)
LOGGED_BARE_NOTICE = (
    "{n} edge(s) have no gradient shape: the backward log of Paddle {version} gives none for "
    "them (the edges leaving {ops}; add_n, for one, logs the gradients it sends only from "
    "Paddle 3.3 on)."
)
_SHOWN = 4  # op names listed at most


def bare_notice(n: int, ann: Annotations, walk: WalkResult, *, logged: bool) -> str:
    """The notice for ``n`` bare edges of a traced graph; ``logged``: its traced backward left
    Paddle's log (Paddle < 3.3)."""
    if not logged:
        return TRACED_BARE_NOTICE.format(n=n)
    import paddle

    ops = list(dict.fromkeys(_bare_sources(ann, walk)))
    more = f" and {len(ops) - _SHOWN} more" if len(ops) > _SHOWN else ""
    shown = ", ".join(ops[:_SHOWN]) + more
    return LOGGED_BARE_NOTICE.format(n=n, version=paddle.__version__, ops=shown or "?")


def _bare_sources(ann: Annotations, walk: WalkResult) -> Iterable[str]:
    """The names of the nodes bare edges leave (an edge no gradient was sent on is not bare)."""
    nodes, edges, silent = walk.nodes, ann.edges, ann.silent
    for edge in walk.edges:
        key = (nodes[edge.source].ptr, edge.slot)
        note = edges.get(key)
        if (note is None or note.grad is None) and key not in silent:
            yield nodes[edge.source].name
