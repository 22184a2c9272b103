"""Helpers for tests/browser/test_scale.py: the widget's status message and state, its
debug hook (draw any DOT through the renderer), DOT that keeps Graphviz busy or makes it fail,
and in-page recorders for clicks, messages and long main-thread tasks."""

from __future__ import annotations

from explorer_page import ROOT, Explorer
from playwright.sync_api import Locator, Page

# The notebook shows two widgets, with overlapping element ids: look inside the first only.
GRAPH = "[data-testid=pvw-graph]"


def budget(explorer: Explorer) -> int:
    """The visible-node budget the widget uses (it publishes it on its root element)."""
    return int(explorer.root.get_attribute("data-budget") or 0)


def shown_nodes(explorer: Explorer) -> int:
    return explorer.root.locator(f"{GRAPH} svg g.node").count()


def node_ids(explorer: Explorer) -> set[str]:
    nodes = explorer.root.locator(f"{GRAPH} svg g.node")
    return set(nodes.evaluate_all("(els) => els.map((e) => e.id)"))


def element(explorer: Explorer, dom_id: str) -> Locator:
    return explorer.root.locator(f"{GRAPH} [id='{dom_id}']")


def message(explorer: Explorer) -> str:
    return explorer.root.get_by_test_id("pvw-message").text_content() or ""


def wait_for_message(explorer: Explorer, part: str, timeout_ms: float) -> str:
    explorer.page.wait_for_function(
        """([sel, part]) => (document.querySelector(sel)
             .querySelector("[data-testid=pvw-message]").textContent || "").includes(part)""",
        arg=[ROOT, part],
        timeout=timeout_ms,
    )
    return message(explorer)


def wait_for_state(explorer: Explorer, state: str, timeout_ms: float) -> None:
    explorer.page.wait_for_function(
        "([sel, state]) => document.querySelector(sel).dataset.state === state",
        arg=[ROOT, state],
        timeout=timeout_ms,
    )


def layout_is_running() -> str:
    return f"document.querySelector({ROOT!r}).dataset.state === 'rendering'"


def render_dot(page: Page, dot: str) -> None:
    """Hand `dot` to the widget's debug hook (the renderer's normal path); don't wait."""
    page.evaluate("([sel, dot]) => { document.querySelector(sel).pvwRenderDot(dot); }", [ROOT, dot])


def dense_dot(ranks: int, width: int, fanout: int) -> str:
    """`ranks` x `width` nodes, each with `fanout` edges to pseudo-random nodes of the next
    rank: edge crossings keep Graphviz busy for seconds (25 x 80 x 6: ~2-3 s)."""
    seed = 1
    lines = ["digraph {"]
    for i in range(ranks - 1):
        for j in range(width):
            for _ in range(fanout):
                seed = seed * 48271 % 2147483647
                lines.append(f"r{i}_{j} -> r{i + 1}_{seed * width // 2147483647};")
    lines.append("}")
    return "\n".join(lines)


def chain_dot(length: int) -> str:
    """A chain of `length` nodes: ~20,000 overflow the Graphviz WASM's stack."""
    return "digraph {" + "".join(f"n{i}->n{i + 1};" for i in range(length)) + "}"


def record_clicks(page: Page, testid: str) -> None:
    """window.pvwClicks: when each click on the button ran, and the widget's state then."""
    page.evaluate(
        """([sel, testid]) => {
          window.pvwClicks = [];
          const root = document.querySelector(sel);
          root.querySelector(`[data-testid=${testid}]`).addEventListener("click", () => {
            window.pvwClicks.push({ t: performance.now(), state: root.dataset.state });
          }, { capture: true });
        }""",
        [ROOT, testid],
    )


def record_messages(page: Page) -> None:
    """window.pvwMessages: every text the status message shows from now on."""
    page.evaluate(
        """(sel) => {
          window.pvwMessages = [];
          const el = document.querySelector(sel).querySelector("[data-testid=pvw-message]");
          new MutationObserver(() => window.pvwMessages.push(el.textContent))
            .observe(el, { childList: true, characterData: true, subtree: true });
        }""",
        ROOT,
    )


def start_long_tasks(page: Page) -> None:
    """window.pvwLongTasks: durations (ms) of main-thread tasks over 50 ms from now on."""
    page.evaluate(
        """() => {
          window.pvwLongTasks = [];
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.pvwLongTasks.push(e.duration);
          }).observe({ type: "longtask" });
        }"""
    )


def long_tasks_since(page: Page) -> list[float]:
    return page.evaluate("window.pvwLongTasks")
