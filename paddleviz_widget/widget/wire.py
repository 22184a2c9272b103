"""How the widget reaches the page: the front-end bundle anywidget loads, and the ``graph``
trait as binary buffers of JSON text (js/kernel_sync.ts reads them): one buffer, or, for a big
graph, the document in pieces, deflated, that the page inflates and parses one task at a time."""

from __future__ import annotations

import gc
import json
import os
import threading
import zlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..compat.zlib_guard import zlib_broken
from ..export.bundle import bundle

__all__ = [
    "PIECE_ITEMS",
    "bundle",
    "graph_from_json",
    "graph_json",
    "graph_pieces",
    "graph_to_json",
    "json_bytes",
    "pieces_from",
    "resume_after_cell",
    "wait_sent",
]

#: Nodes or edges per piece of a big graph (~1.5 MB of JSON: ~20 ms of the page's parsing).
PIECE_ITEMS = 20_000
#: Documents with at least this many nodes and edges together go to the page in pieces
#: (llama-10k has ~21k, llama-100k ~212k: its 19.5 MB parsed at once held the page ~0.25 s).
#: The environment variable lowers it (the browser tests take the pieces' path on ~10k nodes).
PIECES_FROM = 60_000
PIECES_FROM_VARIABLE = "PADDLEVIZ_WIRE_PIECES_FROM"
#: zlib level of the pieces (the page's DecompressionStream("deflate") inflates them). The
#: browser takes a websocket message in one task, in proportion to its bytes: llama-100k's
#: 19.5 MB held the page ~0.2-0.3 s before any script ran; level 1 makes them 2.9 MB.
DEFLATE_LEVEL = 1
#: Longest a widget waits for the kernel's IOPub thread to pass its graph on (wait_sent).
SEND_WAIT_S = 1.0


def json_bytes(graph: Mapping[str, Any] | list[Any]) -> bytes:
    """Compact UTF-8 JSON of a graph document: orjson's (~6x faster than json's: 15 ms instead
    of 85 per 10k GradNodes), else json's. A document holds no NaN (graph/check.py)."""
    try:
        import orjson

        return bytes(orjson.dumps(graph))
    except Exception:  # noqa: BLE001 - not installed, or a value orjson does not take
        pass
    try:
        return json.dumps(graph, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        # A lone surrogate (a file name whose bytes are not UTF-8, held with surrogate escapes)
        # has no UTF-8: as a \u escape, which JSON.parse reads (the page shows it as U+FFFD).
        return json.dumps(graph, separators=(",", ":")).encode()


def pieces_from() -> int:
    """The size (nodes + edges) from which a document is sent in pieces."""
    try:
        return int(os.environ.get(PIECES_FROM_VARIABLE, PIECES_FROM))
    except ValueError:
        return PIECES_FROM


def _items(graph: Mapping[str, Any], key: str) -> list[Any] | None:
    value = graph.get(key)
    return value if isinstance(value, list) else None


def graph_pieces(graph: Mapping[str, Any]) -> dict[str, Any]:
    """The document as pieces of deflated JSON text: ``head``, the document with empty ``nodes``
    and ``edges`` (keys in their order), then those lists in slices of PIECE_ITEMS, and
    ``deflate``: true; the page inflates them and puts the slices back in place (kernel_sync.ts
    graphDocument): the same document."""
    lists = {key: _items(graph, key) or [] for key in ("nodes", "edges")}
    head = {key: [] if key in lists else value for key, value in graph.items()}
    slices = [
        (key, items[start : start + PIECE_ITEMS])
        for key, items in lists.items()
        for start in range(0, len(items), PIECE_ITEMS)
    ]
    parts: list[dict[str, Any] | list[Any]] = [head, *(items for _, items in slices)]
    deflate = zlib_broken() is None  # Paddle 2.6 imported first in a script: JSON as it is
    pieces = _deflated(parts) if deflate else [memoryview(json_bytes(p)) for p in parts]
    out: dict[str, Any] = {"head": pieces[0], "nodes": [], "edges": [], "deflate": deflate}
    for (key, _), piece in zip(slices, pieces[1:], strict=True):
        out[key].append(piece)
    return out


def _deflated(parts: list[Any]) -> list[memoryview]:
    try:
        # zlib lets go of the GIL: the pieces are deflated on two threads while this one
        # encodes the next (llama-100k: ~0.1 s of deflating mostly hidden behind the encoding).
        with ThreadPoolExecutor(2, thread_name_prefix="pvw-deflate") as pool:
            done = [pool.submit(zlib.compress, json_bytes(p), DEFLATE_LEVEL) for p in parts]
            return [memoryview(f.result()) for f in done]
    except RuntimeError:  # no new thread (the interpreter is exiting): deflated on this one
        return [memoryview(zlib.compress(json_bytes(p), DEFLATE_LEVEL)) for p in parts]


def graph_to_json(graph: Mapping[str, Any], widget: Any) -> Any:
    # Binary buffers of JSON text: ipywidgets would otherwise walk every node, edge and list of
    # the payload looking for buffers, and Jupyter would encode it as nested JSON (~50 ms per
    # 10k GradNodes, in the kernel, before the browser gets anything).
    nodes, edges = _items(graph, "nodes"), _items(graph, "edges")
    if nodes is not None and edges is not None and len(nodes) + len(edges) >= pieces_from():
        widget._graph_text = None  # the static picture encodes it again, after the paint
        return graph_pieces(graph)
    data = json_bytes(graph)
    widget._graph_text = (graph, data)  # read once by the static picture (graph_json below)
    return memoryview(data)


def graph_from_json(value: Any, widget: Any) -> Any:
    if isinstance(value, Mapping) and "head" in value:  # pieces (graph_pieces)
        text = zlib.decompress if value.get("deflate") else bytes
        doc = json.loads(text(value["head"]))
        for key in ("nodes", "edges"):
            doc[key] = [item for piece in value.get(key, []) for item in json.loads(text(piece))]
        return doc
    return json.loads(bytes(value)) if isinstance(value, (bytes, memoryview)) else value


def graph_json(graph: Mapping[str, Any], sent: tuple[Any, bytes] | None) -> str:
    """The graph as JSON text: ``sent``, the bytes made to send this graph to the page, else
    made again."""
    data = sent[1] if sent is not None and sent[0] is graph else json_bytes(graph)
    return data.decode()


def wait_sent(widget: Any, timeout: float = SEND_WAIT_S) -> None:
    """Return once the kernel's IOPub thread has handed what ``widget`` sent so far to zmq (it
    sends in order: an event queued after the messages is set after they left). A widget waits
    for this before the garbage collector may run again: a collection holds the interpreter
    for its whole length (0.03-0.1 s after a 100k-GradNode build, 0.2-1.2 s when an older
    generation's turn comes over the heap of earlier widgets), which the IOPub thread needs to
    send, so the page got the graph only after it. No kernel (a script, tests): no wait."""
    kernel = getattr(getattr(widget, "comm", None), "kernel", None)
    schedule = getattr(getattr(kernel, "iopub_thread", None), "schedule", None)
    if not callable(schedule):
        return
    done = threading.Event()
    try:
        schedule(done.set)  # run at once if the thread is not running
    except Exception:  # noqa: BLE001 - another ipykernel: no wait, as before
        return
    done.wait(timeout)


def resume_after_cell(widget: Any) -> Callable[[Callable[[], None]], bool]:
    """For gc_paused().resume_with: in a kernel, the collector is turned back on at once, with
    what exists now frozen (gc.freeze) until the running cell ends (IPython's post_run_cell)
    and what it sent is on its way (wait_sent). The collection the build's objects bring
    (0.03-0.14 s on llama-100k, 0.2-1.2 s when an older generation's turn comes over earlier
    widgets' documents) then runs after the cell, while the page reads the graph, not before
    the cell's display(w) creates the view that reads it; what the rest of the cell makes is
    collected as usual. A process with frozen objects already (its own gc.freeze), or no
    kernel shell (a script, tests): False, turned on at once."""

    def later(resume: Callable[[], None]) -> bool:
        shell = getattr(getattr(getattr(widget, "comm", None), "kernel", None), "shell", None)
        events = getattr(shell, "events", None)
        if events is None or gc.get_freeze_count():
            wait_sent(widget)  # a kernel without a shell: sent first, then collected
            return False

        def after_cell(*_: Any) -> None:
            events.unregister("post_run_cell", after_cell)
            wait_sent(widget)  # the display's messages too
            if not _frozen_since(marker):  # else the cell froze the heap itself: left so
                gc.unfreeze()

        try:
            events.register("post_run_cell", after_cell)
        except Exception:  # noqa: BLE001 - another IPython: turned on at once, as before
            return False
        gc.freeze()
        marker: list[Any] = []  # made after the freeze: frozen at the cell's end only by another
        resume()
        return True

    return later


def _frozen_since(marker: object) -> bool:
    """Whether ``marker`` (tracked, made just after resume_after_cell's freeze) was frozen
    since. Not frozen, it is in one of the three generations, which then hold only what was
    made after that freeze and is still alive: a short search."""
    return not any(o is marker for g in (0, 1, 2) for o in gc.get_objects(g))
