"""The text reports (summary(), problems(), a run's problems) show names from user code as the
page does: a control character (an ESC sequence that clears a terminal, a BEL) or a bidi
override in a layer name is written as its escape (README "Names are shown as they read"), so
the text printed in a terminal or pasted into an issue reads as the name, not as commands.
Real Paddle models; the names are the test's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import paddle
from paddle import nn
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, open_run, summary, trace

NAME = "a\x1b[2J\x07b\u202ec"
SHOWN = "a\\u001b[2J\\u0007b\\u202ec"
RAW = ("\x1b", "\x07", "\u202e")


class Log(nn.Layer):
    """Makes a NaN from finite values (log of negatives): the problem is in this layer."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: Any) -> Any:
        return paddle.log(self.fc(x) - 10.0)


def _model() -> nn.Layer:
    paddle.seed(0)
    model = nn.Sequential()
    model.add_sublayer(NAME, Log())
    model.add_sublayer("head", nn.Linear(3, 2))
    return model


def _clean(text: str) -> bool:
    return not any(c in text for c in RAW)


def test_summary_shows_a_layer_name_as_its_escapes() -> None:
    model = _model()
    y = model(paddle.randn([2, 3]))
    table = str(summary(y, model=model))
    assert SHOWN in table and _clean(table)


@requires_post_hooks
def test_problems_show_a_layer_name_as_its_escapes() -> None:
    model = _model()
    with trace(model, stats=True):
        y = model(paddle.randn([2, 3]))
        y.mean().backward()
    problems = GraphWidget(y).problems()
    lines = str(problems)
    assert any(p.layer == NAME for p in problems), lines  # the data keeps the name as it is
    assert SHOWN in lines and _clean(lines)


@requires_post_hooks
def test_a_runs_problems_show_a_layer_name_as_its_escapes(tmp_path: Path) -> None:
    paddle.seed(0)
    model = nn.Sequential()
    model.add_sublayer(NAME, nn.Linear(3, 3))  # its weight's gradient: NaN from the data
    with trace(model, stats=True, every=10, run_dir=tmp_path / "run"):
        x = paddle.randn([2, 3])
        x[0, 0] = float("nan")
        model(x).mean().backward()
    run = open_run(tmp_path / "run")
    (problem, *_) = run.problems()
    assert NAME in problem.message  # the log keeps the name as it is
    assert SHOWN in str(problem) and _clean(str(problem))
