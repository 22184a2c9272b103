"""Helpers for tests/browser/test_explorer.py: drive the explorer widget in a JupyterLab page
(run code in its kernel, wait for redraws, find points to hover) and read its SVG."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lab_page import ANYWIDGET_GAVE_UP, DEAF, deafen, open_and_run_notebook, page_problems
from playwright.sync_api import Locator, Page

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
ROOT = "[data-testid=pvw-root]"
GRAPH = "[data-testid=pvw-graph]"
NODES = f"{GRAPH} svg g.node"
CLUSTERS = f"{GRAPH} svg g.cluster"
TIMEOUT_MS = 10_000

# Runs code in the notebook's kernel (like a cell) and returns what it printed.
EXECUTE_JS = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, store_history: false });
  let out = "";
  future.onIOPub = (msg) => {
    const c = msg.content;
    if (msg.header.msg_type === "stream") out += c.text;
    if (msg.header.msg_type === "error") out += `ERROR ${c.ename}: ${c.evalue}`;
  };
  await future.done;
  return out;
}"""

# A point on an edge (its path at `t` of its length) in page coordinates, and what is there.
EDGE_POINT_JS = """([id, t]) => {
  const path = document.getElementById(id).querySelector("path");
  const p = path.getPointAtLength(path.getTotalLength() * t);
  const m = path.getScreenCTM();
  const x = p.x * m.a + p.y * m.c + m.e, y = p.x * m.b + p.y * m.d + m.f;
  const hit = document.elementFromPoint(x, y);
  const g = hit && hit.closest("g.node, g.edge, g.cluster");
  return { x, y, on: g ? g.id : null };
}"""

# A point inside a cluster where the cluster itself (its background) is what the pointer hits.
CLUSTER_POINT_JS = """(id) => {
  const box = document.getElementById(id).getBoundingClientRect();
  for (let fy = 0.1; fy < 1; fy += 0.1) {
    for (let fx = 0.05; fx < 1; fx += 0.05) {
      const x = box.x + box.width * fx, y = box.y + box.height * fy;
      const hit = document.elementFromPoint(x, y);
      if (hit && hit.tagName !== "text" && hit.closest("g.node, g.edge, g.cluster")?.id === id) {
        return { x, y };
      }
    }
  }
  return null;
}"""

CENTRE_OFFSET_JS = """([graphSel, id]) => {
  const a = document.querySelector(graphSel).getBoundingClientRect();
  const b = document.getElementById(id).getBoundingClientRect();
  const dx = a.x + a.width / 2 - (b.x + b.width / 2);
  return Math.hypot(dx, a.y + a.height / 2 - (b.y + b.height / 2));
}"""


# -- fixtures ---------------------------------------------------------------------------------


class Explorer:
    """The running notebook: its page, widget root, and a handle on the kernel."""

    def __init__(self, page: Page, root: Locator) -> None:
        self.page = page
        self.root = root

    def run(self, code: str) -> str:
        out = self.page.evaluate(EXECUTE_JS, code)
        assert "ERROR" not in out, out
        return out

    def value(self, expr: str) -> Any:
        return json.loads(self.run(f"import json; print(json.dumps({expr}))"))

    def value_becomes(self, expr: str, wanted: Any, seconds: float = 10.0) -> Any:
        """``expr``'s value in the kernel once it is ``wanted`` (a change the page made reaches
        the kernel a moment later), or the last value seen after ``seconds``."""
        deadline = time.monotonic() + seconds
        while (got := self.value(expr)) != wanted and time.monotonic() < deadline:
            self.page.wait_for_timeout(100)
        return got

    def renders(self) -> int:
        return int(self.root.get_attribute("data-renders") or 0)

    def wait_ready(self, after: int | None = None) -> None:
        """Wait until a redraw newer than render number `after` (if given) has finished."""
        self.page.wait_for_function(
            """([sel, after]) => {
              const r = document.querySelector(sel);
              const fresh = after === null || Number(r.dataset.renders) > after;
              return r.dataset.state === "ready" && fresh;
            }""",
            arg=[ROOT, after],
            timeout=TIMEOUT_MS,
        )
        self.page.wait_for_timeout(700)  # let the expand/collapse animation finish

    def redrawn(self, action: Callable[[], Any]) -> None:
        """Do `action` (a click, ...) and wait for the redraw it causes."""
        before = self.renders()
        action()
        self.wait_ready(after=before)

    def set_expanded(self, python: str) -> None:
        """Run `python` (which changes w.expanded, or asks the browser to: a depth) and wait
        for the browser's answer and the redraw, if any."""
        before = self.renders()
        old = self.value("w.expanded")
        self.run(python)
        self.answered()
        if self.value("w.expanded") != old:
            self.wait_ready(after=before)

    def answered(self, widget: str = "w") -> None:
        """Wait until the browser has applied the kernel's whole view request."""
        for _ in range(200):
            if self.value(f"{widget}._answered()"):
                return
            self.page.wait_for_timeout(50)
        raise AssertionError(f"the browser never resolved {widget}'s depth request")

    def reset(self) -> None:
        """Every group open, nothing selected, no search, whole graph in view."""
        self.set_expanded("w.expand_all()")
        self.run("w.selected = ''")
        search = self.page.get_by_test_id("pvw-search")
        if search.input_value():
            search.fill("")
        self.page.mouse.move(0, 0)
        self.page.get_by_test_id("pvw-inspector").wait_for(state="hidden")
        self.page.get_by_test_id("pvw-fit").click()
        self.page.wait_for_timeout(400)  # the graph area regains its width and refits

    def set_theme(self, theme: str) -> None:
        self.page.evaluate(
            "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
            theme,
        )
        light = "false" if "Dark" in theme else "true"
        self.page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached")
        self.page.wait_for_timeout(300)

    def contrast_in_theme(self, theme: str) -> dict[str, float]:
        """Switch Lab's theme; per node kind, the worst label/fill contrast (and background)."""
        self.set_theme(theme)
        return self.page.evaluate(CONTRAST_JS, GRAPH)

    def node_ids(self) -> set[str]:
        return set(self.page.locator(NODES).evaluate_all("(els) => els.map((e) => e.id)"))

    def cluster_ids(self) -> set[str]:
        return set(self.page.locator(CLUSTERS).evaluate_all("(els) => els.map((e) => e.id)"))

    def element(self, dom_id: str) -> Locator:
        return self.page.locator(f"{GRAPH} [id='{dom_id}']")


def hover_edge(explorer: Explorer, dom_id: str) -> None:
    tried = []
    for t in (0.5, 0.35, 0.65, 0.2, 0.8, 0.5):
        point = explorer.page.evaluate(EDGE_POINT_JS, [dom_id, t])
        if point["on"] == dom_id:
            explorer.page.mouse.move(point["x"], point["y"])
            explorer.page.get_by_test_id("pvw-tooltip").wait_for(state="visible")
            return
        tried.append(point)
        if (
            len(tried) == 1
        ):  # under the page's own bars (Lab's status bar): scroll it in, as a user would
            explorer.page.evaluate(SCROLL_INTO_VIEW_JS, dom_id)
        explorer.page.wait_for_timeout(150)
    raise AssertionError(f"no point of edge {dom_id} is free to hover: {tried}")


SCROLL_INTO_VIEW_JS = """(id) => document.getElementById(id).scrollIntoView({block: "center"})"""


# Centre of an element on screen.
SCREEN_CENTRE_JS = """(id) => {
  const b = document.getElementById(id).getBoundingClientRect();
  return [b.x + b.width / 2, b.y + b.height / 2];
}"""

# Contrast ratio (WCAG) between each node's label text and its fill, per node kind.
CONTRAST_JS = """(graphSel) => {
  const probe = document.createElement("canvas").getContext("2d");
  const rgb = (css) => {
    probe.fillStyle = "#000";
    probe.fillStyle = css;  // normalises rgb(), color(srgb ...) and names
    probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const lum = ([r, g, b]) => {
    const f = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const out = {};
  for (const g of document.querySelectorAll(`${graphSel} svg g.node`)) {
    const kind = [...g.classList].find((c) => c.startsWith("pvw-"));
    const shape = g.querySelector("polygon, ellipse, path");
    const text = g.querySelector("text");
    const [a, b] = [lum(rgb(getComputedStyle(text).fill)), lum(rgb(getComputedStyle(shape).fill))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    out[kind] = Math.min(out[kind] ?? Infinity, ratio);
  }
  out.background = lum(rgb(getComputedStyle(document.querySelector(graphSel).closest(
    "[data-testid=pvw-root]")).backgroundColor));
  return out;
}"""


@contextmanager
def explorer_page(
    browser: Any, server: Any, notebook: str, front_end_bugs: Sequence[re.Pattern[str]] = ()
) -> Iterator[Explorer]:
    """A page (own browser context) with `notebook` (from tests/browser/notebooks, copied
    into the server's root) run to a ready widget; on exit, no console errors may have
    appeared (but for uncaught errors, stack included, that match one of `front_end_bugs`:
    known bugs of the Jupyter front end itself), and the notebook's kernel is shut down."""
    shutil.copy(NOTEBOOKS / notebook, server.root / notebook)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, device_scale_factor=2)
    page = context.new_page()
    deafen(page)
    errors: list[str] = []
    page.pvw_console_errors = errors  # type: ignore[attr-defined]  # read by page_problems
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc.stack or exc}"))
    try:
        root = open_and_run_notebook(page, server, notebook).first
        root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
        yield Explorer(page, root)
        ours = [e for e in errors if not any(bug.search(e) for bug in front_end_bugs)]
        ours = [e for e in ours if not (DEAF and ANYWIDGET_GAVE_UP in e)]
        assert not ours, page_problems(page)
    finally:
        context.close()
        server.shutdown_sessions()
