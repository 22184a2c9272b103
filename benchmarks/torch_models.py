"""PyTorch twins of ``models.py`` (same architectures and sizes), for the torchviz comparison.

torchvision is not needed: ResNet-50 is written out here (the v1.5 bottleneck, which is what
``paddle.vision.models.resnet50`` builds: stride on the 3x3 conv, bias-free convs).

``python benchmarks/torch_models.py`` prints the autograd-node count of every model.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from models import BERT_LAYERS, HEADS, HIDDEN, KV_HEADS, LLAMA_BLOCKS, MLP_HIDDEN, SEQ, VOCAB


class LeNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 6, 3, 1),
            nn.Sigmoid(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(6, 16, 3, 1),
            nn.Sigmoid(),
            nn.MaxPool2d(2, 2),
        )
        self.fc = nn.Sequential(
            nn.Linear(576, 120),
            nn.Sigmoid(),
            nn.Linear(120, 84),
            nn.Sigmoid(),
            nn.Linear(84, 10),
        )

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(img).reshape(img.shape[0], -1))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet50(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, inplanes = [], 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(Bottleneck(inplanes, planes, stride if i == 0 else 1))
                inplanes = planes * 4
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


class BertLike(nn.Module):
    def __init__(self, layers: int = BERT_LAYERS) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(SEQ, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, MLP_HIDDEN, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        h = self.norm(self.word(ids) + self.position(positions))
        return torch.tanh(self.pooler(self.encoder(h)[:, 0]))


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rotary_tables(seq: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    freqs = torch.arange(seq, dtype=torch.float32).unsqueeze(1) * inv.unsqueeze(0)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head_dim = HIDDEN // HEADS
        kv_dim = KV_HEADS * self.head_dim
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = nn.Linear(HIDDEN, kv_dim, bias=False)
        self.v_proj = nn.Linear(HIDDEN, kv_dim, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.q_norm = RMSNorm(self.head_dim)
        self.k_norm = RMSNorm(self.head_dim)

    def _heads(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        return x.reshape(x.shape[0], x.shape[1], heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, cos, sin, mask) -> torch.Tensor:
        b, s = x.shape[0], x.shape[1]
        q = self.q_norm(self._heads(self.q_proj(x), HEADS))
        k = self.k_norm(self._heads(self.k_proj(x), KV_HEADS))
        v = self._heads(self.v_proj(x), KV_HEADS)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.repeat_interleave(k, HEADS // KV_HEADS, dim=1)
        v = torch.repeat_interleave(v, HEADS // KV_HEADS, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, HIDDEN)
        return self.o_proj(out)


class SwiGLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(HIDDEN, MLP_HIDDEN, bias=False)
        self.up = nn.Linear(HIDDEN, MLP_HIDDEN, bias=False)
        self.down = nn.Linear(MLP_HIDDEN, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(HIDDEN)
        self.mlp = SwiGLU()

    def forward(self, x: torch.Tensor, cos, sin, mask) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class LlamaLike(nn.Module):
    def __init__(self, blocks: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList([LlamaBlock() for _ in range(blocks)])
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        s = ids.shape[1]
        cos, sin = rotary_tables(s, HIDDEN // HEADS)
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h, cos, sin, mask)
        return self.lm_head(self.norm(h))


def _ids() -> torch.Tensor:
    return torch.randint(0, VOCAB, (1, SEQ))


def lenet() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return LeNet(), torch.randn(1, 3, 32, 32)


def resnet50() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return ResNet50(), torch.randn(1, 3, 64, 64)


def bert12() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return BertLike(), _ids()


def llama(blocks: int) -> Callable[[], tuple[nn.Module, torch.Tensor]]:
    def build() -> tuple[nn.Module, torch.Tensor]:
        torch.manual_seed(0)
        return LlamaLike(blocks), _ids()

    return build


MODELS: dict[str, Callable[[], tuple[nn.Module, torch.Tensor]]] = {
    "lenet": lenet,
    "resnet50": resnet50,
    "bert12": bert12,
    **{name: llama(blocks) for name, blocks in LLAMA_BLOCKS.items()},
}


def count_autograd_nodes(y: torch.Tensor) -> int:
    """Distinct autograd nodes reachable from ``y.grad_fn`` (AccumulateGrad included)."""
    seen, stack = set(), [y.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(nxt for nxt, _ in fn.next_functions)
    return len(seen)


def main() -> None:
    print(f"{'model':<12} {'autograd nodes':>14} {'params':>7}")
    for name, builder in MODELS.items():
        model, x = builder()
        n_params = sum(1 for _ in model.parameters())
        print(f"{name:<12} {count_autograd_nodes(model(x)):>14} {n_params:>7}")


if __name__ == "__main__":
    main()
