"""What trace(stats=True)'s GradNode hooks saw, as the edges' dtype/shape/place: on a step
where the hooks see every edge, Paddle's dump is not written and the hooks are the account of
the edges (meta.sources "hooks"). The oracle is Paddle's own dump of the same retained graph,
run by the test after the traced backward and read by the tests' own parser (dump_reader.py):
every edge of the document must equal it. A Llama from paddleformers (its rotary embedding's
concat nodes cannot be hooked: their edges come from what the next node received) and
paddle.vision's ResNet-18 (BatchNorm's hooks get more gradients than it has edges)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import paddle
import pytest
from graph_dicts import nested
from llama_tiny import tiny_llama
from oracle_models import assert_matches_dump, read_dump
from paddle_versions import requires_dump, requires_paddleformers

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import validate_graph_dict


def _llama() -> tuple[paddle.nn.Layer, Any]:
    model, ids = tiny_llama()
    return model, lambda: model(ids)[0].astype("float32").square().mean()


def _resnet() -> tuple[paddle.nn.Layer, Any]:
    model = paddle.vision.models.resnet18(num_classes=10)
    image = paddle.randn([2, 3, 32, 32])
    return model, lambda: model(image).square().mean()


CASES = {"llama": pytest.param(_llama, marks=requires_paddleformers), "resnet18": _resnet}


def _sources(doc: dict[str, Any]) -> Counter[str]:
    meta = doc["meta"]["sources"]
    return Counter(meta["codes"].get(c, c) for c in meta["edges"])


@requires_dump
@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_hook_grads_equal_the_dump(make, tmp_path) -> None:
    paddle.seed(0)
    model, loss_of = make()
    # No per-op stacks and no VLOG: nothing asks for Paddle's dump or log, the hooks see all.
    with trace(model, stats=True, call_sites=False, slots=False):
        loss = loss_of()
        loss.backward(retain_graph=True)
    doc = build_graph(loss)
    validate_graph_dict(doc)
    assert _sources(doc) == Counter({"hooks": len(doc["edges"])})
    assert "dump" not in doc["meta"]["annotations"]
    loss.backward(dump_backward_graph_path=str(tmp_path))  # the oracle, outside the trace
    assert_matches_dump(nested(doc), read_dump(tmp_path))


@requires_dump
def test_the_dump_stays_when_call_sites_need_it(tmp_path) -> None:
    """Paddle's per-op stacks come in the dump's call-stack file: with them on, the dump is
    written and is the edges' source (the hooks fill nothing it has)."""
    paddle.seed(0)
    model, loss_of = _resnet()
    with trace(model, stats=True, call_sites=True, slots=False):
        loss = loss_of()
        loss.backward()
    doc = build_graph(loss)
    assert _sources(doc) == Counter({"dump": len(doc["edges"])})
    assert any(n.get("call_site") is not None for n in doc["nodes"])
