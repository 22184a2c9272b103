"""One long user session (a kernel or training process kept for hours): what trace() and the
widget leave behind after each use stays bounded. Oracles: weak references to the user's
models and tensors after Python's collector ran, counts of objects by type (gc), of open file
descriptors (/proc/self/fd), of threads (/proc/self/task), of files in the temp directory,
each read after a few uses and after many: what grows with the count is a leak."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import paddle
import pytest
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import trace

# stats=True where Paddle has GradNode post hooks (>= 3.0): their closures are what held on;
# 2.6 refuses stats, and the same sessions without them are checked there.
STATS = HAS_POST_HOOKS


def _small_model() -> paddle.nn.Layer:
    return paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 2))


def _alive(refs: list[weakref.ref[paddle.nn.Layer]]) -> int:
    gc.collect()
    return sum(r() is not None for r in refs)


def test_nested_traces_do_not_keep_every_outer_model_alive() -> None:
    """``with trace(G): ... with trace(D): backward`` again and again, a fresh model each time
    (a notebook cell re-run): the inner trace's backward goes through the outer trace's
    wrapper of Tensor.backward, which a forever cache keyed by the function kept, and with it
    the outer session and its model, for every nesting ever run."""
    refs: list[weakref.ref[paddle.nn.Layer]] = []
    x = paddle.randn([4, 8])
    for _ in range(12):
        model = _small_model()
        refs.append(weakref.ref(model))
        with trace(model, stats=STATS):
            loss = model(x).square().mean()
            with trace(model, stats=STATS):
                loss.backward()
        del model, loss
    # The newest finished traces keep their model (build_graph after the block), no more.
    assert _alive(refs) <= 2, f"{_alive(refs)} of 12 models still alive"


def _tanh_sum() -> paddle.Tensor:
    x = paddle.ones([2, 3])
    x.stop_gradient = False
    return paddle.tanh(x * 2).sum()


def test_closed_widgets_are_freed_with_their_graph(tmp_path: Path) -> None:
    """GraphWidget(y) or the run explorer, then ``w.close()``, again and again: each widget,
    and the document it holds, is freed. anywidget turned a Path `_esm`/`_css` into a watched
    file and tied every instance to its change signal strongly: every widget ever made stayed
    alive."""
    from paddleviz_widget import GraphWidget
    from paddleviz_widget.runs.view_widget import RunWidget

    model = _small_model()
    with trace(model, stats=True, every=1, run_dir=tmp_path / "run"):
        model(paddle.randn([4, 8])).square().mean().backward()
    made: list[weakref.ref[object]] = []
    for k in range(8):
        w = GraphWidget(_tanh_sum()) if k % 2 else RunWidget(tmp_path / "run")
        made.append(weakref.ref(w))
        w.close()
        del w
    assert _alive(made) == 0, f"{_alive(made)} of 8 closed widgets still alive"


def test_a_closed_widget_leaves_no_model_open() -> None:
    """``w.close()`` closes every model the widget opened: ipywidgets left the Layout each
    DOMWidget opens with itself open, one comm (and one page model) a widget, for good. A
    Layout the user gave is theirs and stays open."""
    from ipywidgets import Layout
    from ipywidgets.widgets.widget import _instances

    from paddleviz_widget import GraphWidget

    open_before = len(_instances)
    for _ in range(6):
        GraphWidget(_tanh_sum()).close()
    assert len(_instances) == open_before, [type(w).__name__ for w in _instances.values()]
    theirs = Layout(width="50%")
    GraphWidget(_tanh_sum(), layout=theirs).close()
    assert theirs.comm is not None and theirs.model_id in _instances
    theirs.close()


@pytest.mark.parametrize("watched", [False, True], ids=["trace", "watched-run"])
def test_a_finished_trace_does_not_keep_the_model_the_user_dropped(
    watched: bool, tmp_path: Path
) -> None:
    """After ``with trace(model, stats=True): ...`` and ``del model`` (a notebook switching to
    another model, wanting its memory back), the model is freed: the finished trace (and a
    watched run's watch) held it strongly until two more traces ran. The graph of a tensor
    still held keeps its parameter names."""
    from graph_dicts import nested_graph

    model = _small_model()
    ref, expected = weakref.ref(model), {name for name, _ in model.named_parameters()}
    run = {"every": 1, "run_dir": tmp_path / "run"} if watched else {}
    with trace(model, stats=STATS, **run):
        kept = model(paddle.randn([4, 8])).square().mean()
        kept.backward()
    del model
    assert _alive([ref]) == 0, "the dropped model is still alive"
    params = [n["param"] for n in nested_graph(kept)["nodes"] if n.get("param")]
    assert {p["name"] for p in params} == expected
