"""trace() of a model beside the same model's plain backward, where the temporary directory
is in trouble; prints one JSON line: whether the gradients are the plain backward's, the
graph's edge sources and notice, and its whole text.

    tmpdir_full_trace.py                the 30-Linear model, TMPDIR as the caller set it (a
                                        small disk: test_tmpdir_full.py, a 256 kB tmpfs)
    tmpdir_full_trace.py --small DIR    a 3-layer model, tempfile's directory set to DIR,
                                        where nothing can be made (test_no_temp_dir.py)
"""

from __future__ import annotations

import json
import sys
import tempfile

import paddle

from paddleviz_widget import build_graph, trace


def model(small: bool) -> paddle.nn.Layer:
    paddle.seed(0)
    if small:
        return paddle.nn.Sequential(
            paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2)
        )
    return paddle.nn.Sequential(*[paddle.nn.Linear(64, 64) for _ in range(30)])


def no_temporary_directory(where: str) -> None:
    tempfile.tempdir = where  # no temporary directory can be made below it
    try:
        tempfile.mkdtemp()
    except OSError:
        return
    raise SystemExit("a temporary directory could still be made")


small = sys.argv[1:2] == ["--small"]
x = paddle.randn([3, 4] if small else [8, 64])
plain = model(small)
plain(x).sum().backward()
if small and len(sys.argv) > 2:
    no_temporary_directory(sys.argv[2])
traced = model(small)
with trace(traced):
    y = traced(x)
    y.sum().backward()
doc = build_graph(y)
print(json.dumps({
    "same_grads": all((a.grad == b.grad).all().item() for a, b in
                      zip(plain.parameters(), traced.parameters())),
    "sources": doc["meta"]["sources"]["edges"],
    "notice": doc["meta"].get("notice"),
    "text": json.dumps(doc),  # every note the graph carries
}))  # fmt: skip
