"""Real ``paddle.nn`` models at tiny width, for the tracer benchmarks.

Each builder returns ``(model, input)``; ``model(input)`` gives the tensor whose backward graph
we trace. Widths are tiny so forward+backward runs in well under a second on a laptop CPU;
graph *size* (GradNode count) is what matters here, and that depends on depth, not width.

``python benchmarks/models.py`` prints the GradNode count of every model.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import paddle
import paddle.nn as nn
import paddle.nn.functional as F

# Sizes shared with torch_models.py so both frameworks build the same architecture.
HIDDEN = 32
HEADS = 4
KV_HEADS = 2  # grouped-query attention: each k/v head serves HEADS // KV_HEADS query heads
SEQ = 8
VOCAB = 64
MLP_HIDDEN = 64
BERT_LAYERS = 12
LLAMA_BLOCKS = {"llama-2.5k": 32, "llama-6k": 80, "llama-10k": 130}
CHAIN_WIDTH = 4
CHAIN_STAGES = {"chain-100k": (20, 385)}  # stages x blocks -> about 100k GradNodes
# The same Llama blocks (77 GradNodes each) at the 100k scale: a real model's shape (one run of
# 1,300 repeated decoder blocks), built in ~1 s (tiny widths, batch 1, 8 tokens).
HUGE_LLAMA_BLOCKS = {"llama-100k": 1300}


def _seed_models() -> ModuleType:
    """tests/models.py, where the seed LeNet is defined once (loaded by path: both are `models`)."""
    path = Path(__file__).resolve().parent.parent / "tests" / "models.py"
    spec = importlib.util.spec_from_file_location("paddleviz_seed_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LeNet = _seed_models().LeNet


class BertLike(nn.Layer):
    """Embeddings + 12 post-norm encoder layers (nn.TransformerEncoder) + tanh pooler."""

    def __init__(self, layers: int = BERT_LAYERS) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(SEQ, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, MLP_HIDDEN, dropout=0.0, activation="gelu"
        )
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, ids: paddle.Tensor) -> paddle.Tensor:
        positions = paddle.arange(ids.shape[1]).unsqueeze(0)
        h = self.norm(self.word(ids) + self.position(positions))
        h = self.encoder(h)
        return paddle.tanh(self.pooler(h[:, 0]))


class RMSNorm(nn.Layer):
    """x / sqrt(mean(x^2) + eps) * weight, from elementary ops (as Llama writes it)."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * paddle.rsqrt(variance + self.eps) * self.weight


def rotate_half(x: paddle.Tensor) -> paddle.Tensor:
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


def rotary_tables(seq: int, dim: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    inv = 1.0 / (10000 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    freqs = paddle.arange(seq, dtype="float32").unsqueeze(1) * inv.unsqueeze(0)
    emb = paddle.concat([freqs, freqs], axis=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Layer):
    """Causal self-attention from nn.Linear + matmul/softmax, Qwen3-style: grouped-query
    k/v, per-head RMSNorm on q and k (QK-norm), rotary q/k."""

    def __init__(self) -> None:
        super().__init__()
        self.head_dim = HIDDEN // HEADS
        kv_dim = KV_HEADS * self.head_dim
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, kv_dim, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, kv_dim, bias_attr=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.q_norm = RMSNorm(self.head_dim)
        self.k_norm = RMSNorm(self.head_dim)

    def _heads(self, x: paddle.Tensor, heads: int) -> paddle.Tensor:
        return x.reshape([x.shape[0], x.shape[1], heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x: paddle.Tensor, cos: paddle.Tensor, sin: paddle.Tensor, mask):
        b, s = x.shape[0], x.shape[1]
        q = self.q_norm(self._heads(self.q_proj(x), HEADS))
        k = self.k_norm(self._heads(self.k_proj(x), KV_HEADS))
        v = self._heads(self.v_proj(x), KV_HEADS)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = paddle.repeat_interleave(k, HEADS // KV_HEADS, axis=1)
        v = paddle.repeat_interleave(v, HEADS // KV_HEADS, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, HIDDEN])
        return self.o_proj(out)


class SwiGLU(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(HIDDEN, MLP_HIDDEN, bias_attr=False)
        self.up = nn.Linear(HIDDEN, MLP_HIDDEN, bias_attr=False)
        self.down = nn.Linear(MLP_HIDDEN, HIDDEN, bias_attr=False)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(HIDDEN)
        self.mlp = SwiGLU()

    def forward(self, x: paddle.Tensor, cos, sin, mask) -> paddle.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class LlamaLike(nn.Layer):
    """Token embedding, ``blocks`` pre-norm decoder blocks, final RMSNorm, LM head."""

    def __init__(self, blocks: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.LayerList([LlamaBlock() for _ in range(blocks)])
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, ids: paddle.Tensor) -> paddle.Tensor:
        s = ids.shape[1]
        cos, sin = rotary_tables(s, HIDDEN // HEADS)
        mask = paddle.triu(paddle.full([s, s], float("-inf")), diagonal=1)
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h, cos, sin, mask)
        return self.lm_head(self.norm(h))


class ChainBlock(nn.Layer):
    """x + fc2(gelu(fc1(norm(x)))): 14 GradNodes (params included) in 4 nested layers."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(CHAIN_WIDTH)
        self.fc1 = nn.Linear(CHAIN_WIDTH, CHAIN_WIDTH)
        self.fc2 = nn.Linear(CHAIN_WIDTH, CHAIN_WIDTH)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Chain(nn.Layer):
    """A synthetic chain of ``stages`` x ``blocks`` ChainBlocks (stages.k.l), for graphs far
    past what one layout can show: the default view is the stages, collapsed."""

    def __init__(self, stages: int, blocks: int) -> None:
        super().__init__()
        self.stages = nn.LayerList(
            [nn.Sequential(*[ChainBlock() for _ in range(blocks)]) for _ in range(stages)]
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for stage in self.stages:
            x = stage(x)
        return x.sum()


def _ids() -> paddle.Tensor:
    return paddle.randint(0, VOCAB, [1, SEQ])


def lenet() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return LeNet(), paddle.randn([1, 3, 32, 32])


def resnet50() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return paddle.vision.models.resnet50(), paddle.randn([1, 3, 64, 64])


def bert12() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return BertLike(), _ids()


def llama(blocks: int) -> Callable[[], tuple[nn.Layer, paddle.Tensor]]:
    def build() -> tuple[nn.Layer, paddle.Tensor]:
        paddle.seed(0)
        return LlamaLike(blocks), _ids()

    return build


def chain(stages: int, blocks: int) -> Callable[[], tuple[nn.Layer, paddle.Tensor]]:
    def build() -> tuple[nn.Layer, paddle.Tensor]:
        paddle.seed(0)
        return Chain(stages, blocks), paddle.randn([1, CHAIN_WIDTH])

    return build


MODELS: dict[str, Callable[[], tuple[nn.Layer, paddle.Tensor]]] = {
    "lenet": lenet,
    "resnet50": resnet50,
    "bert12": bert12,
    **{name: llama(blocks) for name, blocks in LLAMA_BLOCKS.items()},
}
# Not in MODELS (the other benchmarks loop over it): ~100k GradNodes, for bench_widget.py.
HUGE: dict[str, Callable[[], tuple[nn.Layer, paddle.Tensor]]] = {
    **{name: chain(*shape) for name, shape in CHAIN_STAGES.items()},
    **{name: llama(blocks) for name, blocks in HUGE_LLAMA_BLOCKS.items()},
}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from paddleviz_widget import build_graph

    print(f"{'model':<12} {'GradNodes':>9} {'edges':>7} {'params':>7}")
    for name, builder in MODELS.items():
        model, x = builder()
        graph = build_graph(model(x))
        params = sum(1 for n in graph["nodes"] if n["kind"] == "param")
        print(f"{name:<12} {len(graph['nodes']):>9} {len(graph['edges']):>7} {params:>7}")


if __name__ == "__main__":
    main()
