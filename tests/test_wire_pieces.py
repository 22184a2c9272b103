"""A big graph goes to the page in pieces of deflated JSON text (widget/wire.py graph_pieces),
inflated and parsed one task at a time (js/kernel_sync.ts); what the page puts back together is
the document itself.
Driven through the widget's comm, buffers and their paths as Jupyter delivers them."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from comm.base_comm import BaseComm

from paddleviz_widget.widget import GraphWidget, wire

DOC = json.loads((Path(__file__).parent / "fixtures/graphs/resnet18.json").read_text())


class WireComm(BaseComm):
    """A comm whose wire is a list: each state message with its buffers."""

    def __init__(self, **kwargs: Any) -> None:
        self.published: list[tuple[Any, list[bytes]]] = []
        super().__init__(target_name="jupyter.widget", **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        buffers = [bytes(b) for b in kwargs.get("buffers") or []]
        self.published.append((json.loads(json.dumps(data)), buffers))


def sent_graph(w: GraphWidget) -> Any:
    """The `graph` state of the last message that carried it, its buffers put back at their
    paths (as the page's widget manager does: ipywidgets' put_buffers)."""
    data, buffers = next(
        m
        for m in reversed(w.comm.published)
        if any(p[0] == "graph" for p in m[0].get("buffer_paths", []))
    )
    state = data["state"]
    for path, buffer in zip(data["buffer_paths"], buffers):
        holder = state
        for key in path[:-1]:
            holder = holder.setdefault(key, {})
        holder[path[-1]] = memoryview(buffer)
    return state["graph"]


def test_a_small_graph_goes_as_one_buffer() -> None:
    w = GraphWidget.from_graph(DOC, comm=WireComm())
    w.send_state("graph")
    value = sent_graph(w)
    assert isinstance(value, memoryview)
    assert bytes(value) == wire.json_bytes(DOC)


def test_a_big_graph_goes_in_pieces_that_make_the_same_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(wire.PIECES_FROM_VARIABLE, "100")
    monkeypatch.setattr(wire, "PIECE_ITEMS", 40)
    w = GraphWidget.from_graph(DOC, comm=WireComm())
    w.send_state("graph")
    value = sent_graph(w)
    assert set(value) == {"head", "nodes", "edges", "deflate"} and value["deflate"] is True
    assert len(value["nodes"]) == -(-len(DOC["nodes"]) // 40) > 2
    assert len(value["edges"]) == -(-len(DOC["edges"]) // 40)
    sent = [value["head"], *value["nodes"], *value["edges"]]
    # Deflated (zlib, what the page's DecompressionStream("deflate") reads): far fewer bytes.
    assert sum(map(len, sent)) * 3 < sum(len(zlib.decompress(b)) for b in sent)
    last = len(DOC["nodes"]) % 40 or 40
    assert json.loads(zlib.decompress(value["nodes"][-1])) == DOC["nodes"][-last:]
    head = json.loads(zlib.decompress(value["head"]))
    assert list(head) == list(DOC) and head["nodes"] == head["edges"] == []
    back = wire.graph_from_json(value, w)
    assert wire.json_bytes(back) == wire.json_bytes(DOC)  # byte for byte, keys in order
    assert w.graph == DOC  # the kernel's trait is the whole document
    # The static picture is made from the whole document's JSON, encoded again.
    assert wire.graph_json(w.graph, w.__dict__.get("_graph_text")) == wire.json_bytes(DOC).decode()


def test_the_threshold_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wire.pieces_from() == wire.PIECES_FROM
    monkeypatch.setenv(wire.PIECES_FROM_VARIABLE, "5000")
    assert wire.pieces_from() == 5000
    monkeypatch.setenv(wire.PIECES_FROM_VARIABLE, "many")
    assert wire.pieces_from() == wire.PIECES_FROM
