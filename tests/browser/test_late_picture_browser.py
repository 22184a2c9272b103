"""The picture a saved notebook keeps of each widget (widget/late_picture.py) costs the live
page nothing before the widget is painted: its output is published first as an empty text,
which JupyterLab renders at once, and becomes the HTML picture only later. An HTML output makes
JupyterLab load and start MathJax (to typeset it), ~0.2-0.4 s of the page's main thread that
landed inside the page's first widget (benchmarks/RESULTS.md, session 12). The notebook has code
cells only: a rendered markdown cell would load MathJax itself."""

from __future__ import annotations

from explorer_page import explorer_page

NOTEBOOK = "late_picture.ipynb"

# MathJax's CHTML output adds this stylesheet once JupyterLab has started it.
MATHJAX_JS = "() => document.getElementById('MJX-CHTML-styles') !== null"
# The output row that follows the widget's: its rendered mime type and whether it takes space.
NEXT_ROW_JS = """() => {
  const row = document.querySelector('.jp-OutputArea-child:has([data-testid=pvw-root])');
  const next = row && row.nextElementSibling;
  const out = next && next.querySelector('[data-mime-type]');
  return next && [out && out.dataset.mimeType, next.getBoundingClientRect().height];
}"""


def test_the_picture_waits_and_the_page_loads_no_mathjax_before_the_widget_is_painted(
    chromium_browser, lab_server
) -> None:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as notebook:
        page = notebook.page
        # The widget is drawn; its picture is held back (the gate): the row after the widget
        # is the placeholder, an empty text that takes no space, and MathJax never started.
        assert page.evaluate(NEXT_ROW_JS) == ["text/plain", 0]
        assert page.evaluate(MATHJAX_JS) is False

        notebook.run("gate.set()")
        page.wait_for_selector("div.pvw-static-late svg", state="attached", timeout=60_000)
        # The picture is there, hidden; now JupyterLab has started MathJax for the HTML output
        # (the check above can fail: it sees what the placeholder spared the first paint).
        assert page.evaluate(NEXT_ROW_JS) == ["text/html", 0]
        page.wait_for_function(MATHJAX_JS, timeout=30_000)
        assert notebook.root.is_visible()
