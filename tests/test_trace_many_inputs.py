"""An op with many inputs (add_n of 40 layers' outputs, a very wide graph) under trace().

Its VLOG 6 slot dump is longer than glog's 30,000-byte message limit, so Paddle's log holds it
cut before its outputs. The notice used to blame the user's log ("runs without output slots
(VLOG below 6?) ... Expected the VLOG 6 log of Paddle 2.6, 3.0 or 3.3") though the log was
VLOG 6: now it names the cut. The oracle for the cut is Paddle's own log, read here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import paddle
import pytest
from paddle_versions import requires_paddle_33

from paddleviz_widget import build_graph, trace

WIDE = 40  # 33 inputs still fit in 30,000 bytes (Paddle 3.3)
GLOG_MAX = 30_000  # glog's LogMessage::kMaxLogMessageLen

MODEL = textwrap.dedent(
    f"""
    import paddle

    class Wide(paddle.nn.Layer):
        def __init__(self, n={WIDE}):
            super().__init__()
            self.branches = paddle.nn.LayerList([paddle.nn.Linear(8, 8) for _ in range(n)])

        def forward(self, x):
            return paddle.add_n([b(x) for b in self.branches])
    """
)


# Paddle 3.3's account of add_n (its VLOG 6 dump, cut at glog's limit) is these tests' subject.
# On 3.0 (and 2.6) add_n's edges get no shape from the log at all, and the notice says so
# (test_add_n_notice.py).
pytestmark = requires_paddle_33


def _wide() -> paddle.nn.Layer:
    space: dict = {}
    exec(MODEL, space)  # the same model the oracle's subprocess runs
    return space["Wide"]()


def test_paddles_own_log_cuts_the_add_n_dump() -> None:
    """The premise, from Paddle itself: at VLOG 6 its add_n grad dump message reaches glog's
    limit and has no "Output:" part."""
    script = MODEL + "\nm = Wide()\nm(paddle.randn([2, 8])).sum().backward()\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
        env={**os.environ, "GLOG_v": "6"}, check=True,
    )  # fmt: skip
    messages = done.stderr.split("\nI")  # one glog record each ("I1130 ...")
    dumps = [m for m in messages if "add_n_node.cc" in m.split("\n", 1)[0] and "Input: [" in m]
    assert dumps and max(len(m) for m in dumps) >= GLOG_MAX - 200
    assert not any("Output: [" in m for m in dumps)


def test_a_dump_cut_by_glog_is_not_blamed_on_the_log() -> None:
    paddle.seed(0)
    model = _wide()
    with trace(model):
        y = model(paddle.randn([2, 8]))
        y.sum().backward()
    notice = build_graph(y)["meta"].get("notice") or ""
    assert "VLOG below 6" not in notice and "Expected the VLOG 6 log" not in notice, notice
    assert "30,000-byte" in notice, notice


@pytest.mark.parametrize("n", [2, 33])
def test_add_n_that_fits_says_nothing(n: int) -> None:
    paddle.seed(0)
    space: dict = {}
    exec(MODEL, space)
    model = space["Wide"](n)
    with trace(model):
        y = model(paddle.randn([2, 8]))
        y.sum().backward()
    assert build_graph(y)["meta"].get("notice") is None
