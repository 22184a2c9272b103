"""GraphWidget's ``view`` trait: which reading of the graph the page draws ("backward" or
"forward"; js/view/forward.ts holds what they mean, tests/browser/test_forward_browser.py checks
the drawing). Here: the kernel side accepts the two readings and rejects anything else with a
clear error that leaves the widget as it was."""

from __future__ import annotations

import paddle
import pytest
import traitlets

from paddleviz_widget.widget import GraphWidget, ViewError


def small_output() -> paddle.Tensor:
    x = paddle.ones([2, 3])
    x.stop_gradient = False
    w = paddle.create_parameter([3, 4], "float32")
    return paddle.matmul(x, w).sum()


def test_backward_by_default_and_forward_on_request() -> None:
    y = small_output()
    assert GraphWidget(y).view == "backward"
    w = GraphWidget(y, view="forward")
    assert w.view == "forward"
    assert w.get_state()["view"] == "forward"  # what the page is sent
    w.view = "backward"
    assert w.get_state()["view"] == "backward"


@pytest.mark.parametrize("bad", ["Forward", "fwd", "", "both"])
def test_anything_else_is_refused_with_a_clear_error(bad: str) -> None:
    y = small_output()
    with pytest.raises(ValueError, match=r'view must be "backward" or "forward", got '):
        GraphWidget(y, view=bad)
    w = GraphWidget(y, view="forward")
    with pytest.raises(ViewError) as info:
        w.view = bad
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, traitlets.TraitError)
    assert w.view == "forward"  # unchanged


def test_a_value_that_is_not_text_is_refused() -> None:
    w = GraphWidget(small_output())
    with pytest.raises(traitlets.TraitError):
        w.view = 1  # type: ignore[assignment]
    assert w.view == "backward"
