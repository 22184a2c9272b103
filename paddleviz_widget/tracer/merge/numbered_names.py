"""The line a graph gets when Paddle numbered its GradNodes' names because ``GLOG_v`` was set to
6 or more before ``import paddle`` (the seed paddleviz's example does it in its first lines).

Paddle 3.3 then names each node after its forward API and a call counter (``add5GradNode``,
``matmul12GradNode``), so no two blocks' ops have the same names: repeated blocks are not
folded, and an op whose API name ends in a digit cannot be named in the forward reading
(``relu612``: relu6 or relu?). This Paddle needs no ``GLOG_v`` (trace() switches its log on
around each backward), so the line says to unset it. Said only when the environment variable
is what numbered them: trace()'s own log, on during a backward, numbers the nodes a
``create_graph=True`` backward makes, which is not the user's doing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ..capture.vlog import runtime_switch_available

#: The level from which Paddle numbers its GradNodes (measured on 3.3.1: 5 does not, 6 does).
NUMBERING_LEVEL = 6
_NUMBERED = re.compile(r"^[a-z][a-z0-9_]*[0-9]GradNode$")

NUMBERED_NOTICE = (
    "GLOG_v={level} was set before `import paddle`, so Paddle numbered its GradNodes' names "
    "({example}): repeated blocks cannot be folded. This Paddle needs no GLOG_v (trace() "
    "switches its log on by itself): remove it (and Paddle stops logging every op)."
)


def numbered_names_notice(names: Iterable[str]) -> str | None:
    """The line for a graph with these GradNode names, or None."""
    try:
        level = int(os.environ["GLOG_v"])  # noqa: SIM112 - glog's own spelling
    except (KeyError, ValueError):
        return None
    if level < NUMBERING_LEVEL or not runtime_switch_available():
        return None  # Paddle 2.6 / 3.0 do not number the names under GLOG_v: nothing to advise
    example = next((name for name in names if _NUMBERED.match(name)), None)
    if example is None:
        return None
    return NUMBERED_NOTICE.format(level=level, example=example)
