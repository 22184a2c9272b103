"""copy.deepcopy(model) inside a trace() block (a "best model so far" kept, an EMA or teacher
copy) gives the user a model of their own: trace()'s forward hooks come along in its hook
tables (Paddle copies them), but do nothing there. Before, the copy's NaN/Inf check (a bound
method, whose object deepcopy copies) read every layer output of every forward for good and
held the last one alive, and the layer-scope closures made the copy unpicklable ("Can't
pickle local object '_register_hooks.<locals>.pre'"). Oracles: a weak reference to the
copy's output, pickle itself, and the model's own output on the same input."""

from __future__ import annotations

import copy
import gc
import pickle
import weakref

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import trace


def _paddle_pickles_a_model() -> bool:
    """Paddle 2.6 and 3.0 cannot pickle any Layer, untraced ("cannot pickle
    'EagerParamBase' object"): there the copy's hook tables, where trace()'s hooks sit, are
    pickled instead."""
    try:
        pickle.dumps(paddle.nn.Linear(2, 2))
    except TypeError:
        return False
    return True


def _model() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))


def _copy_in_block(
    model: paddle.nn.Layer, x: paddle.Tensor, watched: str | None
) -> paddle.nn.Layer:
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    kept = None
    block = (
        trace(model, stats=True, every=3, run_dir=watched) if watched else trace(model, stats=True)
    )
    with block:
        for step in range(5):
            model(x).square().mean().backward()
            opt.step()
            opt.clear_grad()
            if step == 2:  # watched: the next step is captured, its layer hooks are on
                kept = copy.deepcopy(model)
    assert kept is not None
    return kept


@pytest.mark.parametrize(
    "watched",
    [pytest.param(False, marks=requires_post_hooks), True],
    ids=["trace-stats", "watched-run"],
)
def test_a_model_copied_inside_trace_is_the_users_own(tmp_path, watched):
    model, x = _model(), paddle.randn([4, 8])
    kept = _copy_in_block(model, x, str(tmp_path / "run") if watched else None)
    out = kept(x)
    np.testing.assert_array_equal(out.numpy(), _model_at_step_3(x))
    held = weakref.ref(out)
    del out
    gc.collect()
    assert held() is None  # not kept alive by a copied NaN/Inf check
    if not _paddle_pickles_a_model():
        for layer in kept.sublayers(include_self=True):
            pickle.dumps((layer._forward_pre_hooks, layer._forward_post_hooks))
        return
    again = pickle.loads(pickle.dumps(kept))
    np.testing.assert_array_equal(again(x).numpy(), kept(x).numpy())


def _model_at_step_3(x: paddle.Tensor) -> np.ndarray:
    """The same three steps, untraced: what the copy must compute."""
    model = _model()
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    for _ in range(3):
        model(x).square().mean().backward()
        opt.step()
        opt.clear_grad()
    return model(x).numpy()
