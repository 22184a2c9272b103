"""trace() of a 30-Linear model whose backward's log and dump go to a temporary directory on
a small disk (TMPDIR, set by test_tmpdir_full.py on a 256 kB tmpfs): prints one JSON line,
whether the gradients are the plain backward's, the graph's notice and its whole text."""

from __future__ import annotations

import json

import paddle

from paddleviz_widget import build_graph, trace


def model() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(*[paddle.nn.Linear(64, 64) for _ in range(30)])


x = paddle.randn([8, 64])
plain = model()
plain(x).sum().backward()
traced = model()
with trace(traced):
    y = traced(x)
    y.sum().backward()
doc = build_graph(y)
print(json.dumps({
    "same_grads": all((a.grad == b.grad).all().item() for a, b in
                      zip(plain.parameters(), traced.parameters())),
    "notice": doc["meta"].get("notice"),
    "text": json.dumps(doc),  # every note the graph carries
}))  # fmt: skip
