"""A standalone page for bench_browser.py: the widget's own bundle (paddleviz_widget/static)
served on 127.0.0.1 with a tiny stand-in for the anywidget model, so the widget runs exactly
as in JupyterLab minus Lab itself (no kernel round trips, no Lab work on the main thread).

The page exposes ``window.pvwBench``:

- ``load(name)``: fetch and parse payload ``name`` (outside anything timed).
- ``mount(name, state)``: what anywidget does for a new widget, on a fresh element: its
  ``initialize({model})`` (awaited), then ``render({model, el})``, with the synced state
  (``expanded``, ``depth``, ``height``, ``selected``) a GraphWidget would send and payload
  ``name``; resolves to the first-paint time in ms (see FIRST_PAINT below). With ``cold: true``
  in ``state`` the timed span starts before the bundle's ``import()`` (see COLD below). Where
  the time went is left in ``last``: ``at`` (ms from the start to: bundle imported,
  initialize() resolved, render() returned, every node in the DOM); ``measures()`` lists the
  widget's own ``performance.measure`` entries since (``pvw:*``: layout request to SVG,
  drawing, worker start, WASM compile, worker ready) as ``{name, start, duration, detail}``,
  ``start`` in ms from the same start.
- ``framed()``: resolves once the browser has rendered the next frame (see FIRST_PAINT).
- ``model``: the stand-in model (``get``/``set``/``save_changes``), to drive the traits.
- ``longTasks``: every main-thread task over 50 ms the Long Tasks API reported
  (``{start, duration}`` in ms of ``performance.now()``).
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "paddleviz_widget" / "static"

FIRST_PAINT = (
    "first paint = from the call of the widget's initialize() (anywidget calls it, then "
    "render(); the payload is already in the page, as the model's state is in Lab) until the "
    "default view's SVG, with every visible node, is in the DOM and the browser has rendered "
    "the next frame (its style, layout and paint: a task queued from its animation-frame "
    "callback has run)"
)

COLD = (
    "cold = the first widget of a fresh page: the timed span also holds the bundle's import() "
    "(fetched from a loopback server, parsed, evaluated: that starts the layout worker and the "
    "Graphviz WASM's decode and compile), the worker's start, the WASM's instantiation and "
    "lazy compilation in the worker, the first layout and the drawing"
)

INDEX_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>paddleviz_widget bench</title>
<link rel="stylesheet" href="widget.css"></head>
<body style="margin:0"><div id="host" style="width:1400px"></div>
<script type="module" src="harness.js"></script></body></html>
"""

HARNESS_JS = """
let widget = null;
const importWidget = async () => { widget ??= (await import("./widget.js")).default; };

const longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: "longtask", buffered: true });

// What anywidget hands render(): get/set/on/off/save_changes over the synced traits.
class Model {
  constructor(state) { this.state = { ...state }; this.handlers = new Map(); }
  get(key) { return this.state[key]; }
  set(key, value) {
    this.state[key] = value;
    for (const fn of this.handlers.get(`change:${key}`) ?? []) fn();
  }
  on(event, fn) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(fn);
  }
  off(event, fn) { this.handlers.get(event)?.delete(fn); }
  save_changes() {}
  send() {}
}

let cleanup = null;
window.pvwBench = {
  longTasks,
  model: null,
  payloads: {},
  /** Fetch and parse a payload ahead of mount(), outside what is timed. */
  async load(name) {
    window.pvwBench.payloads[name] = await (await fetch(`${name}.json`)).json();
  },
  importWidget,
  /** Resolves once the browser has rendered the next frame: a task queued from that frame's
   * requestAnimationFrame callback runs after its style, layout and paint. */
  framed() {
    return new Promise((resolve) => requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    }));
  },
  async mount(name, { cold = false, ...rest }) {
    const state = { ...rest, graph: window.pvwBench.payloads[name] };
    if (cleanup) cleanup();
    const host = document.getElementById("host");
    host.replaceChildren();
    const el = document.createElement("div");
    host.appendChild(el);
    const model = new Model(state);
    window.pvwBench.model = model;
    const at = {};
    const start = performance.now();
    if (cold) await importWidget();
    at.imported = performance.now() - start;
    // As anywidget does: the model-level hook, awaited, then the view's render().
    await widget.initialize?.({ model, signal: new AbortController().signal, experimental: {} });
    at.initialized = performance.now() - start;
    cleanup = widget.render({ model, el });
    at.rendered = performance.now() - start;
    const want = () => Number(el.querySelector("[data-testid=pvw-root]")?.dataset.visibleNodes);
    await new Promise((resolve) => {
      const check = () => {
        const n = el.querySelectorAll("svg g.node").length;
        if (n > 0 && n === want()) { observer.disconnect(); resolve(); }
      };
      const observer = new MutationObserver(check);
      observer.observe(el, { childList: true, subtree: true });
      check();
    });
    at.inDom = performance.now() - start;
    await window.pvwBench.framed();
    const ms = performance.now() - start;
    window.pvwBench.last = { ms, at, start };
    return ms;
  },
  /** The widget's performance measures since the last mount began (some, such as the worker
   * being ready, may come after its first paint). */
  measures() {
    const start = window.pvwBench.last.start;
    return performance.getEntriesByType("measure")
      .filter((m) => m.name.startsWith("pvw:") && m.startTime >= start)
      .map((m) => ({
        name: m.name.slice(4), start: m.startTime - start, duration: m.duration, detail: m.detail,
      }));
  },
};
window.pvwBenchReady = true;
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_page(payloads: dict[str, dict]) -> Iterator[str]:
    """Serve the page, the built bundle and `payloads` (name -> graph JSON, fetched by
    ``pvwBench.load(name)``) on a free loopback port; yield the page's URL."""
    if not (STATIC / "widget.js").exists():
        raise SystemExit("paddleviz_widget/static/widget.js is missing: run `npm run build` first")
    with tempfile.TemporaryDirectory(prefix="pvw-bench-") as tmp:
        root = Path(tmp)
        for name in ("widget.js", "widget.css"):
            shutil.copy(STATIC / name, root / name)
        (root / "index.html").write_text(INDEX_HTML, encoding="utf-8")
        (root / "harness.js").write_text(HARNESS_JS, encoding="utf-8")
        (root / "favicon.ico").write_bytes(b"")
        for name, graph in payloads.items():
            (root / f"{name}.json").write_text(json.dumps(graph), encoding="utf-8")
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
        finally:
            server.shutdown()
            server.server_close()
