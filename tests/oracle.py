"""Compare our graph with Paddle's own backward dump (the oracle)."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import paddle
from dump_reader import BackwardDump, read_dump_dir


def backward_with_dump(loss: paddle.Tensor, directory: Path, **kwargs: Any) -> BackwardDump:
    loss.backward(dump_backward_graph_path=str(directory), **kwargs)
    return read_dump_dir(directory)


def edge_multiset(graph: dict[str, Any]) -> collections.Counter[tuple[str, str]]:
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    return collections.Counter((ptr[e["source"]], ptr[e["target"]]) for e in graph["edges"])


def dump_edge_multiset(dump: BackwardDump) -> collections.Counter[tuple[str, str]]:
    return collections.Counter((e.source, e.target) for e in dump.edges)
