"""The saved explorer page (issue 12, part 1): ``standalone_html(payload)`` is one HTML file that
holds everything it runs (no URL it could fetch), whose data reads back exactly what was put in,
whatever the names in it hold. Read with the standard library's HTML parser (which, like a
browser, ends a <script> only at "</script"), not with the code under test.

That the page runs (from file://, offline) is tests/browser/test_standalone_browser.py.
"""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import paddle
import pytest
from hostile_model import CLASS, LAYERS, PARAM, hostile_output, hostile_params
from models import LeNet

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.standalone import standalone_html

STATIC = Path(__file__).resolve().parents[1] / "paddleviz_widget" / "static"
# URLs that are names, never fetched: XML namespaces, and the public id of the SVG 1.1 DTD in
# the header Graphviz writes (which the widget parses as text).
NAMESPACES = {
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/2000/xmlns/",
    "http://www.w3.org/XML/1998/namespace",
    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
}
URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>()\\`]+")  # a scheme alone is no URL
# Tags a page needs; anything else (img, link, iframe, base, object...) would be a leak.
EXPECTED_TAGS = {"html", "head", "meta", "title", "style", "body", "div", "noscript", "script"}


class Page(HTMLParser):
    """Every start tag with its attributes, and the text inside each element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[int, str] = {}
        self._open: list[int] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta",):
            self._open.append(len(self.tags) - 1)
            self.text[len(self.tags) - 1] = ""

    def handle_endtag(self, tag: str) -> None:
        if self._open and self.tags[self._open[-1]][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            self.text[self._open[-1]] += data

    def scripts(self) -> list[tuple[dict[str, str | None], str]]:
        return [(a, self.text[i]) for i, (t, a) in enumerate(self.tags) if t == "script"]

    def json_script(self, element_id: str) -> Any:
        (text,) = [s for a, s in self.scripts() if a.get("id") == element_id]
        return json.loads(text)

    def title(self) -> str:
        (i,) = [i for i, (t, _) in enumerate(self.tags) if t == "title"]
        return self.text[i]


@pytest.fixture(scope="module")
def lenet_doc() -> dict[str, Any]:
    paddle.seed(0)
    model = LeNet()
    with trace(model):  # layer groups and every edge's gradient
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    return build_graph(y, model=model)


@pytest.fixture(scope="module")
def hostile_doc() -> dict[str, Any]:
    model, y = hostile_output(traced=True)
    return build_graph(y, params=hostile_params(model))


def test_the_page_holds_everything_it_runs(lenet_doc: dict[str, Any]) -> None:
    text = standalone_html(lenet_doc)
    page = Page(text)
    assert {tag for tag, _ in page.tags} <= EXPECTED_TAGS
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            assert name not in attrs, f"<{tag} {name}=...> would load something"
    assert "@import" not in text and "url(" not in text  # no stylesheet fetches anything
    assert set(URL.findall(text)) <= NAMESPACES, "a URL that is not a namespace name"
    # Four scripts: three of data the browser does not run, and the boot code, inline.
    kinds = [(attrs.get("type"), attrs.get("id")) for attrs, _ in page.scripts()]
    assert kinds == [
        ("application/json", "pvw-state"),
        ("application/json", "pvw-graph-json"),
        ("application/json", "pvw-bundle"),
        ("module", None),
    ]
    text.encode("ascii")  # the JSON parts are ASCII; nothing depends on the file's encoding


def test_the_data_reads_back_exactly(lenet_doc: dict[str, Any]) -> None:
    groups = [g["id"] for g in lenet_doc["groups"]]
    page = Page(standalone_html(lenet_doc, expanded=groups[:2], depth=1, selected="n1"))
    assert page.json_script("pvw-graph-json") == lenet_doc
    # The same explorer as in Jupyter: the widget's own bundle, byte for byte, and the boot code.
    assert page.json_script("pvw-bundle") == (STATIC / "widget.js").read_text("utf-8")
    assert page.scripts()[3][1].strip() == (STATIC / "standalone.js").read_text("utf-8").strip()
    state = page.json_script("pvw-state")
    # What GraphWidget asks of a new view (widget/graph_widget.py): depth 1, then exactly these
    # groups.
    assert state["_request"] == {"id": 1, "depth": 1, "edits": [["set", groups[:2]]]}
    assert (state["height"], state["selected"], state["expanded"]) == ("100vh", "n1", groups[:2])

    default = Page(standalone_html(lenet_doc)).json_script("pvw-state")
    assert default["_request"] == {"id": 1, "depth": -1, "edits": []}  # the automatic depth
    assert (default["view"], default["fold"]) == ("backward", True)  # GraphWidget's defaults
    read = Page(standalone_html(lenet_doc, view="forward", fold=False)).json_script("pvw-state")
    assert (read["view"], read["fold"]) == ("forward", False)


def test_hostile_names_and_title_stay_text(hostile_doc: dict[str, Any]) -> None:
    title = f"{LAYERS[1]} {CLASS} {PARAM} <!-- \u2028 &amp; \ud800"
    doc = {**hostile_doc, "meta": {**hostile_doc.get("meta", {}), "notice": "<!-- </script"}}
    text = standalone_html(doc, title=title)
    page = Page(text)
    # Nothing in a name opened or closed an element: the page has its own tags, in order.
    assert [t for t, _ in page.tags] == [
        "html", "head", "meta", "meta", "title", "style", "body", "div", "noscript",
        "script", "script", "script", "script",
    ]  # fmt: skip
    assert page.title() == title.replace("\ud800", "\ufffd")  # UTF-8 has no lone surrogate
    assert page.json_script("pvw-graph-json") == doc
    assert text.lower().count("</script") == 4 and "<!--" not in text
    names = json.dumps(page.json_script("pvw-graph-json"), ensure_ascii=False)
    for name in [*LAYERS, CLASS, PARAM]:
        assert json.dumps(name, ensure_ascii=False)[1:-1] in names
    text.encode("utf-8")  # writable as a file


def test_bad_input_says_what_to_pass(lenet_doc: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="build_graph"):
        standalone_html([lenet_doc])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth must be"):
        standalone_html(lenet_doc, depth=-2)
    with pytest.raises(TypeError, match="list of layer-group ids"):
        standalone_html(lenet_doc, expanded="g1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='view must be "backward" or "forward"'):
        standalone_html(lenet_doc, view="Forward")
    with pytest.raises(TypeError, match="fold must be a bool"):
        standalone_html(lenet_doc, fold="no")  # type: ignore[arg-type]
    broken = {**lenet_doc, "meta": {"norm": math.nan}}
    with pytest.raises(ValueError, match="JSON cannot carry"):
        standalone_html(broken)
