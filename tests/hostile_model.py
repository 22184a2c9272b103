"""A model whose layer paths, layer class and a parameter's name are the hostile strings of
tests/fixtures/hostile_names.json (markup that would run a script, quotes, braces, Graphviz's
own escapes, newlines, %, entities, non-ASCII). Used by tests/test_hostile_names.py and the
browser notebook tests/browser/notebooks/hostile.ipynb.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paddle
from paddle import nn

NAMES = json.loads((Path(__file__).parent / "fixtures" / "hostile_names.json").read_text("utf-8"))
LAYERS: list[str] = NAMES["layers"]
CLASS: str = NAMES["class"]
PARAM: str = NAMES["param"]


def _forward(self: Any, x: paddle.Tensor) -> paddle.Tensor:
    return self.inner(x)


# A layer class whose name is markup: type() takes any string.
Evil = type(CLASS, (nn.Layer,), {"forward": _forward})


class HostileModel(nn.Layer):
    """Five Linear layers in a chain, named by add_sublayer and setattr (one inside an Evil),
    and a `scale` parameter that the tests name PARAM through params=."""

    def __init__(self) -> None:
        super().__init__()
        self.add_sublayer(LAYERS[0], nn.Linear(4, 4))
        setattr(self, LAYERS[1], nn.Linear(4, 4))
        evil = Evil()
        evil.add_sublayer("inner", nn.Linear(4, 4))
        self.add_sublayer(LAYERS[2], evil)
        self.add_sublayer(LAYERS[3], nn.Linear(4, 4))
        self.add_sublayer(LAYERS[4], nn.Linear(4, 3))
        self.scale = self.create_parameter([3])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for layer in self.children():
            x = layer(x)
        return x * self.scale


def hostile_params(model: HostileModel) -> dict[str, Any]:
    """The model's parameters by name, `scale` renamed to PARAM."""
    named = {name: p for name, p in model.named_parameters() if name != "scale"}
    return {**named, PARAM: model.scale}


def hostile_output(traced: bool = True) -> tuple[HostileModel, paddle.Tensor]:
    """The model and its output; `traced`: forward and backward inside trace()."""
    from paddleviz_widget import trace

    paddle.seed(0)
    model = HostileModel()
    x = paddle.randn([2, 4])
    if not traced:
        return model, model(x)
    with trace(model):
        y = model(x)
        y.sum().backward()
    return model, y
