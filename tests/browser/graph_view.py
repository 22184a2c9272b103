"""Read and drive the widget's d3-graphviz SVG from a test (zoom transform, free spots)."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from playwright.sync_api import Locator, Page

GRAPH = "[data-testid=pvw-graph]"
SVG_NODES = f"{GRAPH} svg g.node"
# d3-zoom writes its transform on the SVG's top group.
ZOOM_GROUP = f"{GRAPH} svg > g"

_NUMBER = r"(-?[\d.]+(?:e-?\d+)?)"
_TRANSLATE = re.compile(rf"translate\(\s*{_NUMBER}[\s,]+{_NUMBER}\s*\)")
_SCALE = re.compile(rf"scale\(\s*{_NUMBER}(?:[\s,]+{_NUMBER})?\s*\)")

# A point of the graph area where the SVG itself (not a node, edge or the toolbar) is under
# the pointer: the place to start a pan, as a user dragging the background would.
_BACKGROUND_POINT = """(graph) => {
  const svg = graph.querySelector("svg");
  const box = graph.getBoundingClientRect();
  const view = { w: window.innerWidth, h: window.innerHeight };
  for (let fy = 0.5; fy < 0.95; fy += 0.05) {
    for (let fx = 0.05; fx < 0.95; fx += 0.05) {
      for (const sy of [fy, 1 - fy]) {
        const x = box.left + box.width * fx;
        const y = box.top + box.height * sy;
        if (x < 0 || y < 0 || x >= view.w || y >= view.h) continue;
        const hit = document.elementFromPoint(x, y);
        if (hit && svg.contains(hit) && !hit.closest("g.node, g.edge")) return { x, y };
      }
    }
  }
  return null;
}"""


@dataclass(frozen=True)
class Transform:
    x: float
    y: float
    k: float

    def close_to(self, other: Transform, tol: float = 0.5) -> bool:
        return (
            math.isclose(self.k, other.k, rel_tol=1e-3)
            and abs(self.x - other.x) <= tol
            and abs(self.y - other.y) <= tol
        )


def parse_transform(text: str | None) -> Transform:
    translate = _TRANSLATE.search(text or "")
    scale = _SCALE.search(text or "")
    x, y = (float(translate.group(1)), float(translate.group(2))) if translate else (0.0, 0.0)
    return Transform(x, y, float(scale.group(1)) if scale else 1.0)


def transform_attr(page: Page) -> str:
    return page.locator(ZOOM_GROUP).first.get_attribute("transform") or ""


def zoom_transform(page: Page) -> Transform:
    return parse_transform(transform_attr(page))


def wait_for_new_transform(page: Page, before: str, timeout_ms: float = 5000) -> Transform:
    """Wait until the zoom group's transform is no longer `before` (wheel events are async)."""
    page.wait_for_function(
        """([sel, before]) => {
          const g = document.querySelector(sel);
          return !!g && (g.getAttribute("transform") || "") !== before;
        }""",
        arg=[ZOOM_GROUP, before],
        timeout=timeout_ms,
    )
    return zoom_transform(page)


def wait_for_transform_near(page: Page, target: Transform, timeout_s: float = 5) -> Transform:
    """Poll until the zoom transform is close to `target` (Fit may animate); return the last."""
    deadline = time.monotonic() + timeout_s
    current = zoom_transform(page)
    while not current.close_to(target) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        current = zoom_transform(page)
    return current


def background_point(graph: Locator) -> tuple[float, float]:
    point = graph.evaluate(_BACKGROUND_POINT)
    assert point, "found no empty spot of the graph to start a drag from"
    return point["x"], point["y"]


def screen_box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, "element is not rendered"
    return box
