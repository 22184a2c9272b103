"""Where VLOG cannot be switched on (a Paddle < 3.3 whose glog FLAGS_v is out of reach), a
backward inside trace() logs nothing for us, so what Paddle writes to stderr during it is the
user's and reaches them.

Paddle 2.6 writes "Standalone Executor is Used." (an INFO record) in a to_static program's
first backward; inside trace() it used to be captured with the log we could not have and
dropped (round 24). The traced run stands in for such a libpaddle (no FLAGS_v cell) and lets
the program node be logged (which 2.6 and 3.0 otherwise turn off for programs), so that the
capture is tried and given up. Each run is its own process: Paddle writes the line once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
from paddle_versions import HAS_VLOG_SWITCH

_SCRIPT = textwrap.dedent(
    """
    import zlib, os, sys
    import paddle, paddle.nn as nn
    from paddleviz_widget import trace
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    program = paddle.jit.to_static(model, full_graph=True)
    y = program(paddle.randn([2, 4])).sum()
    sys.stderr.flush()
    os.write(2, b"<<backward\\n")
    if sys.argv[1] == "trace":
        from paddleviz_widget.tracer.capture import session, vlog
        vlog.flags_v_cell = lambda: None
        session.maybe_program_node = lambda name: False
        with trace(model):
            y.backward()
    else:
        y.backward()
    sys.stderr.flush()
    os.write(2, b"backward>>\\n")
    """
)


def _backward_stderr(mode: str) -> list[str]:
    """The stderr lines written while the backward ran, glog's time and thread left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLOG_")}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode],
        env=env, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    during = done.stderr.split("<<backward\n", 1)[1].split("backward>>\n", 1)[0]
    return [re.sub(r"^([IWEF])\d{4} [\d:.]+ +\d+ ", r"\1 ", line) for line in during.splitlines()]


@pytest.mark.skipif(HAS_VLOG_SWITCH, reason="VLOG is switched on at run time: the log is ours")
def test_what_paddle_writes_during_a_traced_backward_reaches_the_user():
    plain = _backward_stderr("plain")
    assert _backward_stderr("trace") == plain
