"""GraphWidget and Python's garbage collector: no collection runs between the start of the
build (GraphWidget(y)) or of the reading (from_graph) and the graph's send (a full pass over the
user's heap took 0.7-2.4 s with a 100k-GradNode model in the kernel, benchmarks/RESULTS.md
issue 22 round 10), and the collector is left as the user had it."""

from __future__ import annotations

import gc
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import paddle
import pytest

from paddleviz_widget.widget import GraphWidget, graph_widget, wire


def small_output() -> paddle.Tensor:
    x = paddle.ones([2, 3])
    x.stop_gradient = False
    w = paddle.create_parameter([3, 4], "float32")
    return paddle.tanh(paddle.matmul(x, w)).sum()


@pytest.fixture
def eager_collector() -> Iterator[list[int]]:
    """A collection after every allocation of a tracked object; the generations collected."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(1)
    gc.enable()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()


def test_no_collection_while_the_widget_builds_and_sends(
    eager_collector: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    y = small_output()
    built: list[int] = []  # collections seen when the build began
    sent: list[int] = []  # and when each message left
    build, send = graph_widget.build_graph, GraphWidget.send_state

    def build_graph(*args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(len(eager_collector))
        return build(*args, **kwargs)

    def send_state(self: GraphWidget, key: Any = None) -> None:
        sent.append(len(eager_collector))
        send(self, key)

    monkeypatch.setattr(graph_widget, "build_graph", build_graph)
    monkeypatch.setattr(GraphWidget, "send_state", send_state)
    w = GraphWidget(y)
    assert w.graph["nodes"] and built and sent[-1] >= built[0]
    assert sent[-1] == built[0]  # the graph's message: no collection since the build began
    assert gc.isenabled()
    x = [[] for _ in range(3)]  # and the collector runs again at once
    assert len(eager_collector) > built[0] and x


def test_no_collection_while_a_document_is_read_and_sent(
    eager_collector: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = graph_widget.build_graph(small_output())
    read: list[int] = []  # collections seen when the document was read
    sent: list[int] = []
    saved, send = graph_widget.saved_document, GraphWidget.send_state

    def saved_document(*args: Any) -> Any:
        read.append(len(eager_collector))
        return saved(*args)

    def send_state(self: GraphWidget, key: Any = None) -> None:
        sent.append(len(eager_collector))
        send(self, key)

    monkeypatch.setattr(graph_widget, "saved_document", saved_document)
    monkeypatch.setattr(GraphWidget, "send_state", send_state)
    w = GraphWidget.from_graph(doc)
    assert w.graph["nodes"] and read and sent
    assert sent[-1] == read[0]
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    enabled = gc.isenabled()
    gc.disable()
    try:
        GraphWidget(small_output())
        assert not gc.isenabled()
    finally:
        if enabled:
            gc.enable()


def test_a_failed_build_turns_the_collector_back_on() -> None:
    assert gc.isenabled()
    with pytest.raises(TypeError):
        GraphWidget(small_output(), model=object())
    assert gc.isenabled()


class _IOPubThread:
    """ipykernel's IOPubThread as the widget sees it: ``schedule(f)`` runs ``f`` later on its
    own thread, in order with the messages sent before it."""

    def __init__(self, delay: float) -> None:
        self.delay, self.ran = delay, []

    def schedule(self, f: Any) -> None:
        def run() -> None:
            self.ran.append(gc.isenabled())  # the collector's state as the messages leave
            f()

        threading.Timer(self.delay, run).start()


def test_the_collector_waits_until_the_kernel_has_sent_the_graph(
    eager_collector: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection holds the interpreter, which the kernel's IOPub thread needs to send the
    graph: the widget leaves the collector paused until that thread has sent it."""
    iopub = _IOPubThread(0.2)
    kernel = types.SimpleNamespace(iopub_thread=iopub)
    start = GraphWidget._start

    def with_kernel(self: GraphWidget, *args: Any) -> None:
        start(self, *args)
        monkeypatch.setattr(self.comm, "kernel", kernel, raising=False)

    monkeypatch.setattr(GraphWidget, "_start", with_kernel)
    t0 = time.perf_counter()
    w = GraphWidget(small_output())
    assert time.perf_counter() - t0 >= 0.2 and iopub.ran == [False]  # waited, paused till then
    assert w.graph["nodes"] and gc.isenabled()
    iopub.ran.clear()
    GraphWidget.from_graph(w.graph)
    assert iopub.ran == [False]


def test_no_kernel_no_wait() -> None:
    t0 = time.perf_counter()
    wire.wait_sent(types.SimpleNamespace(comm=None))
    wire.wait_sent(types.SimpleNamespace(comm=types.SimpleNamespace(kernel=None)))
    assert time.perf_counter() - t0 < 0.05


def test_in_a_kernel_the_heap_is_frozen_until_the_cell_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collection the build's objects bring runs after the cell (its display(w) creates the
    view that reads the graph), once the IOPub thread has sent what the cell sent: until then
    what existed is frozen, and the collector is on for what the rest of the cell makes."""
    from IPython.core.events import EventManager, available_events

    events = EventManager(None, available_events)
    iopub = _IOPubThread(0.05)
    kernel = types.SimpleNamespace(iopub_thread=iopub, shell=types.SimpleNamespace(events=events))
    start = GraphWidget._start

    def with_kernel(self: GraphWidget, *args: Any) -> None:
        start(self, *args)
        monkeypatch.setattr(self.comm, "kernel", kernel, raising=False)

    monkeypatch.setattr(GraphWidget, "_start", with_kernel)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    try:
        w = GraphWidget(small_output())
        GraphWidget.from_graph(w.graph)  # frozen already: on at once, nothing frozen again
        assert gc.isenabled() and gc.get_freeze_count() > 0 and iopub.ran == [False]
        cycle: list[Any] = []
        cycle.append(cycle)
        made_later = id(cycle)
        del cycle
        gc.collect()  # what the rest of the cell makes is collected as usual
        assert made_later not in {id(o) for o in gc.get_objects()}
        events.trigger("post_run_cell", None)
        assert gc.isenabled() and gc.get_freeze_count() == 0  # sent, then unfrozen (once)
        assert events.callbacks["post_run_cell"] == []  # one cell only
        with pytest.raises(TypeError):  # a failed build: on at once, nothing frozen
            GraphWidget(small_output(), model=object())
        assert gc.isenabled() and gc.get_freeze_count() == 0
        gc.disable()  # the user's choice stays
        GraphWidget(small_output())
        events.trigger("post_run_cell", None)
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        gc.enable()
        GraphWidget(small_output())
        gc.freeze()  # the cell's own freeze after the widget: left as the cell made it
        events.trigger("post_run_cell", None)
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        gc.freeze()  # a process that froze its heap itself: never unfrozen by the widget
        GraphWidget(small_output())
        assert events.callbacks["post_run_cell"] == []
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
