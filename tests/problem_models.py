"""Small real models for problems(): healthy ones of many kinds (each must get zero problem
lines) and the seven classic training bugs, each planted in a model of its own.

``traced(make)``: seeded, two Adam steps under ``trace(model, stats=True)``, the graph of the
last loss. ``make()`` returns (model, batch, loss of model output) callables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paddle
import paddle.nn as nn
import paddle.nn.functional as F

Loss = Callable[[Any], Any]
Made = tuple[nn.Layer, Callable[[], Any], Loss]


def _mse(y: Any) -> Any:
    return y.square().mean()


def traced(make: Callable[[], Made], steps: int = 2) -> tuple[nn.Layer, dict[str, Any]]:
    """The model and the graph document of its last traced step."""
    from paddleviz_widget import build_graph

    model, loss = traced_loss(make, steps)
    return model, build_graph(loss, model=model)


def traced_loss(make: Callable[[], Made], steps: int = 2) -> tuple[nn.Layer, Any]:
    """The model and its last traced step's loss."""
    from paddleviz_widget import trace

    paddle.seed(0)
    model, batch, loss_of = make()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    with trace(model, stats=True):
        for step in range(steps):
            inputs = batch()
            out = model(*inputs) if isinstance(inputs, tuple) else model(inputs)
            loss = loss_of(out)
            loss.backward()
            if step < steps - 1:
                opt.step()
                opt.clear_grad()
    return model, loss


# -- healthy -------------------------------------------------------------------------------


def mlp() -> Made:
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 4))  # fmt: skip
    return model, lambda: paddle.randn([16, 8]), _mse


def cnn_batchnorm() -> Made:
    model = nn.Sequential(
        nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
        nn.Conv2D(8, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
        nn.AdaptiveAvgPool2D(1), nn.Flatten(), nn.Linear(8, 10),
    )  # fmt: skip
    return (
        model,
        lambda: paddle.randn([4, 3, 12, 12]),
        lambda y: F.cross_entropy(y, paddle.to_tensor([1, 2, 3, 4])),
    )


class Residual(nn.Layer):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.inp = nn.Linear(8, width)
        self.blocks = nn.LayerList(
            [nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
             for _ in range(3)]
        )  # fmt: skip
        self.out = nn.Linear(width, 2)

    def forward(self, x: Any) -> Any:
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


def residual() -> Made:
    return Residual(), lambda: paddle.randn([8, 8]), _mse


class Recurrent(nn.Layer):
    def __init__(self, cell: type) -> None:
        super().__init__()
        self.rnn = cell(6, 12)
        self.head = nn.Linear(12, 3)

    def forward(self, x: Any) -> Any:
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def lstm() -> Made:
    return Recurrent(nn.LSTM), lambda: paddle.randn([4, 5, 6]), _mse


def gru() -> Made:
    return Recurrent(nn.GRU), lambda: paddle.randn([4, 5, 6]), _mse


def transformer_encoder() -> Made:
    class Encoder(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1)
            self.head = nn.Linear(16, 2)

        def forward(self, x: Any) -> Any:
            return self.head(self.layer(x).mean(axis=1))

    return Encoder(), lambda: paddle.randn([2, 6, 16]), _mse


class Bag(nn.Layer):
    """Embedding then a classifier; ``tied``: the output projection is the embedding's."""

    def __init__(self, tied: bool = False) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.tied = tied
        self.proj = nn.Linear(16, 16)
        if not tied:
            self.out = nn.Linear(16, 50)

    def forward(self, ids: Any) -> Any:
        h = F.gelu(self.proj(self.emb(ids)))
        if self.tied:
            return paddle.matmul(h, self.emb.weight, transpose_y=True)
        return self.out(h)


def _token_loss(y: Any) -> Any:
    return F.cross_entropy(y.reshape([-1, 50]), paddle.arange(12).reshape([-1, 1]) % 50)


def embedding() -> Made:
    return Bag(), lambda: paddle.randint(0, 50, [2, 6]), _token_loss


def tied_weights() -> Made:
    return Bag(tied=True), lambda: paddle.randint(0, 50, [2, 6]), _token_loss


def dropout() -> Made:
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 4))
    return model, lambda: paddle.randn([16, 8]), _mse


def layernorm_gelu() -> Made:
    model = nn.Sequential(nn.Linear(8, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 32),
                          nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 4))  # fmt: skip
    return model, lambda: paddle.randn([16, 8]), _mse


def vision_resnet18() -> Made:
    from paddle.vision.models import resnet18

    model = resnet18(num_classes=10)
    return (
        model,
        lambda: paddle.randn([2, 3, 64, 64]),
        lambda y: F.cross_entropy(y, paddle.to_tensor([1, 7])),
    )


def tiny_llama() -> Made:
    from llama_tiny import tiny_llama as make

    model, ids = make()
    return model, lambda: ids, lambda out: (out[0] if isinstance(out, tuple) else out.logits).mean()


HEALTHY: dict[str, Callable[[], Made]] = {
    "mlp": mlp, "cnn_batchnorm": cnn_batchnorm, "residual": residual, "lstm": lstm, "gru": gru,
    "transformer_encoder": transformer_encoder, "embedding": embedding,
    "tied_weights": tied_weights, "dropout": dropout, "layernorm_gelu": layernorm_gelu,
    "vision_resnet18": vision_resnet18, "tiny_llama": tiny_llama,
}  # fmt: skip


# -- the seven planted bugs ------------------------------------------------------------------


class Gate(nn.Layer):
    """``y * sqrt(gate * mask)``: where the mask is 0, sqrt's backward makes 0 * Inf = NaN."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.gate = self.create_parameter([size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, y: Any) -> Any:
        mask = paddle.ones([y.shape[-1]])
        mask[0] = 0.0
        return y * paddle.sqrt(self.gate * mask)


class Tower(nn.Layer):
    """Linear -> ``block`` (the planted bug) -> Linear."""

    def __init__(self, block: nn.Layer, width: int = 16) -> None:
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.block = block
        self.head = nn.Linear(width, 2)

    def forward(self, x: Any) -> Any:
        return self.head(self.block(F.relu(self.embed(x))))


class LogScale(nn.Layer):
    """``log(x - 1)`` on ReLU outputs in [0, 1): a NaN made in the forward."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Any) -> Any:
        return self.fc(x) * paddle.log(x.clip(0, 0.5) - 1.0).mean()


def nan_in_backward() -> Made:
    return Tower(Gate(16)), lambda: paddle.randn([4, 8]), _mse


def nan_in_forward() -> Made:
    return Tower(LogScale(16)), lambda: paddle.randn([4, 8]), _mse


class WithSpare(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.spare = nn.Linear(8, 4)  # never called

    def forward(self, x: Any) -> Any:
        return self.fc(x)


def unused_layer() -> Made:
    return WithSpare(), lambda: paddle.randn([4, 8]), _mse


class Detached(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.gate = nn.Linear(8, 4)

    def forward(self, x: Any) -> Any:
        return self.fc(x) * F.sigmoid(self.gate(x)).detach()  # the gate never learns


def detached_branch() -> Made:
    return Detached(), lambda: paddle.randn([4, 8]), _mse


def dead_relu() -> Made:
    """A 5-layer ReLU MLP whose third layer's bias is -100: the ReLUs after it never fire.
    (Other biases non-zero, so that the layers after it still pass a gradient.)"""
    layers: list[nn.Layer] = []
    for _ in range(5):
        layers += [nn.Linear(8, 8), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    with paddle.no_grad():
        for k in range(0, 9, 2):
            model[k].bias.set_value(paddle.rand([8]) * 0.5 + 0.1)
        model[4].bias.set_value(paddle.full([8], -100.0))
    return model, lambda: paddle.randn([4, 8]), lambda y: (y - 1.0).square().mean()


def exploding_init() -> Made:
    """A 6-layer ReLU MLP, its fourth Linear's weights scaled x1000."""
    layers: list[nn.Layer] = []
    for _ in range(6):
        layers += [nn.Linear(16, 16), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    with paddle.no_grad():
        model[6].weight.set_value(model[6].weight * 1000.0)
    return model, lambda: paddle.randn([8, 16]), _mse


def vanishing_sigmoid() -> Made:
    """12 Linear+Sigmoid layers on inputs x1e3: the first layers saturate."""
    layers: list[nn.Layer] = []
    for _ in range(12):
        layers += [nn.Linear(16, 16), nn.Sigmoid()]
    model = nn.Sequential(*layers)
    return model, lambda: paddle.randn([8, 16]) * 1e3, _mse


# name -> (model, traced steps): a NaN's first step's Adam update would make every weight NaN,
# so those are traced for one step.
BUGS: dict[str, tuple[Callable[[], Made], int]] = {
    "nan_in_backward": (nan_in_backward, 1), "nan_in_forward": (nan_in_forward, 1),
    "unused_layer": (unused_layer, 2), "detached_branch": (detached_branch, 2),
    "dead_relu": (dead_relu, 2), "exploding_init": (exploding_init, 2),
    "vanishing_sigmoid": (vanishing_sigmoid, 2),
}  # fmt: skip
