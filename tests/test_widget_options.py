"""A widget constructor's keyword options are checked: a misspelt one is refused with the close
match (traitlets alone took `flod=False` with a hidden DeprecationWarning, and the widget drew
folded), a `depth` that is not a whole number gets the package's error, not "'<' not supported
between instances of 'str' and 'int'", and a height of no pixels is refused."""

from __future__ import annotations

import paddle
import pytest

from paddleviz_widget import GraphWidget, build_graph, trace


def _output() -> paddle.Tensor:
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 1))
    return model(paddle.randn([2, 4]))


def _open_widgets() -> set:
    from ipywidgets.widgets.widget import _instances

    return set(_instances)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("flod", "fold"), ("veiw", "view"), ("dpeth", "depth"), ("hieght", "height")],
)
def test_a_misspelt_option_is_refused_naming_what_was_meant(typo, meant):
    y = _output()
    before = _open_widgets()
    with pytest.raises(TypeError) as info:
        GraphWidget(y, **{typo: 1})
    message = str(info.value)
    assert f"unexpected keyword argument {typo!r}" in message
    assert f"did you mean {meant!r}" in message
    assert _open_widgets() == before  # refused before the comm opened
    with pytest.raises(TypeError, match=f"did you mean {meant!r}"):
        GraphWidget.from_graph(build_graph(y), **{typo: 1})


def test_the_traits_and_ipywidgets_layout_are_still_taken():
    w = GraphWidget(_output(), fold=False, view="forward", layout={"width": "50%"})
    assert (w.fold, w.view, w.layout.width) == (False, "forward", "50%")
    w.close()


@pytest.mark.parametrize("depth", ["1", 1.5, True])
def test_a_depth_that_is_not_a_whole_number_is_named(depth):
    y = _output()
    with pytest.raises(TypeError, match=r"depth is how many levels .* got "):
        GraphWidget(y, depth=depth)
    with pytest.raises(TypeError, match=r"depth is how many levels"):
        GraphWidget.from_graph(build_graph(y), depth=depth)


def test_heights():
    y = _output()
    for bad in (-5, 0):
        with pytest.raises(ValueError, match="height must be > 0 pixels"):
            GraphWidget(y, height=bad)
    with pytest.raises(TypeError, match="height is pixels"):
        GraphWidget(y, height=7.5)
    w = GraphWidget(y, height=700)
    assert w.height == "700px"
    w.close()


def test_from_run_refuses_a_misspelt_option(tmp_path):
    model = paddle.nn.Linear(4, 1)
    with trace(model, stats=True, every=1, run_dir=tmp_path / "run"):
        for _ in range(2):
            model(paddle.randn([2, 4])).mean().backward()
            model.clear_gradients()
    with pytest.raises(TypeError, match="did you mean 'step'"):
        GraphWidget.from_run(tmp_path / "run", stpe=1)
    w = GraphWidget.from_run(tmp_path / "run", step=1)
    assert w.step == 1
    w.close()
