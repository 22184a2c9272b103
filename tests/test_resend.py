"""A page that missed the kernel's messages (anywidget's 2 s start-up deadline, js/
anywidget_deadline.ts) asks for the widget's state again: the kernel sends every synced key as
it is now but anywidget's own, which the comm opened with. Driven through the widget's comm, as
Jupyter delivers it; the graph read back from the wire as the page reads it."""

from __future__ import annotations

from typing import Any

import paddle
from models import LeNet
from wire_comm import WireComm

from paddleviz_widget import trace
from paddleviz_widget.widget import GraphWidget
from paddleviz_widget.widget.resend import RESEND
from paddleviz_widget.widget.wire import graph_from_json

ANYWIDGETS_OWN = {"_esm", "_css", "_bundle", "_anywidget_id"}


def page_says(w: Any, content: Any) -> list[tuple[Any, list[bytes]]]:
    wire = w.comm
    before = len(wire.published)
    wire.handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
    return wire.published[before:]


def test_a_resend_sends_the_state_as_it_is_now_but_anywidgets_own_keys() -> None:
    paddle.seed(0)
    model = LeNet()
    with trace(model):
        y = model(paddle.randn([2, 3, 32, 32]))
        y.sum().backward()
    w = GraphWidget(y, comm=WireComm())
    w.collapse_all()  # a view request the page may have missed too
    ((update, buffers),) = page_says(w, {"type": RESEND})
    assert update["method"] == "update"
    state = update["state"]
    assert set(state) | {p[0] for p in update["buffer_paths"]} == set(w.keys) - ANYWIDGETS_OWN
    (path,) = update["buffer_paths"]
    assert path == ["graph"] and graph_from_json(buffers[0], w) == w.graph
    assert state["_request"] == w._request and state["depth"] == 0 and state["expanded"] == []


def test_other_messages_send_no_state() -> None:
    w = GraphWidget.from_graph({"schema_version": "2.0", "nodes": [], "edges": []},
                               comm=WireComm())  # fmt: skip
    assert page_says(w, {"type": "pvw-something-else"}) == []
    assert page_says(w, [RESEND]) == []
