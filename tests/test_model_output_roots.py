"""paddleformers' models return ``(logits, past_key_values)`` (a DynamicCache) or a
ModelOutput holding one: ``GraphWidget(model(ids))``, the call the error message itself
suggested, was refused ("item 1 is a DynamicCache, not a paddle.Tensor; ... e.g.
GraphWidget(model(x))"). Such an entry is left out, and a notice names it; a number in
place of a tensor still gets its error (tests/test_bad_input.py)."""

from __future__ import annotations

import paddle
import pytest
from paddle_versions import requires_paddleformers

from paddleviz_widget import GraphWidget, build_graph

pytestmark = requires_paddleformers


def _phi3():
    from paddleformers.transformers import Phi3Config, Phi3ForCausalLM

    paddle.seed(0)
    config = Phi3Config(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        fuse_rms_norm=False,  # the fused kernel is GPU-only
    )  # fmt: skip
    return Phi3ForCausalLM(config), paddle.randint(0, 64, [1, 6])


def _ptrs(doc: dict) -> set[str]:
    return {n["ptr"] for n in doc["nodes"]}


@pytest.mark.parametrize("return_dict", [False, True], ids=["tuple", "ModelOutput"])
def test_a_models_output_with_its_cache_is_drawn(return_dict: bool) -> None:
    model, ids = _phi3()
    out = model(ids, labels=ids, return_dict=True) if return_dict else model(ids)
    cache = out["past_key_values"] if return_dict else out[1]
    assert type(cache).__name__ == "DynamicCache"  # the case under test
    tensors = [out["loss"], out["logits"]] if return_dict else [out[0]]
    doc = build_graph(out)
    alone = build_graph(tensors)
    assert _ptrs(doc) == _ptrs(alone)  # the same graph as its tensors'
    labels = [o["label"] for o in doc["meta"]["outputs"]]
    if return_dict:
        assert labels == ["loss", "logits"]
    else:  # as for the tensor alone (a tensor's own name, else output_<its index>)
        assert labels == [o["label"] for o in alone["meta"]["outputs"]]
    where = "key 'past_key_values'" if return_dict else "item 1"
    notices = doc["meta"].get("notices") or [doc["meta"]["notice"]]
    assert any(f"{where} (a DynamicCache)" in n for n in notices), notices
    GraphWidget(out).close()
