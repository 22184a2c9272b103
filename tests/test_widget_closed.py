"""A GraphWidget shown after ``w.close()``, in a real kernel driven as nbclient and JupyterLab
drive it: the output says the widget is closed, with no traceback (ipywidgets' close() takes
the comm and sets the instance's ``_repr_mimebundle_`` to None, which the widget's display
used to call). Its document stays usable. The page's side: tests/browser/
test_widget_life_browser.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from front_end_kernel import execute, kernel

ROOT = Path(__file__).resolve().parents[1]

LENET = str(ROOT / "tests/fixtures/graphs/lenet.json")
MAKE = f"""import json, pathlib
from paddleviz_widget import GraphWidget
doc = json.loads(pathlib.Path({LENET!r}).read_text())
w = GraphWidget.from_graph(doc)
w.close()"""


@pytest.fixture(scope="module")
def kc() -> Iterator[Any]:
    with kernel() as client:
        yield client


@pytest.mark.parametrize("cell", [None, "c1"], ids=["nbclient", "jupyterlab"])
def test_a_closed_widget_shown_says_it_is_closed(kc: Any, cell: str | None) -> None:
    made = [m["msg_type"] for m in execute(kc, MAKE, cell)]
    assert "error" not in made and "stream" not in made, made
    for code in ("w", "display(w)"):
        messages = execute(kc, code, cell)
        kinds = [m["msg_type"] for m in messages]
        assert "error" not in kinds and "stream" not in kinds, messages
        (shown,) = [m["content"]["data"] for m in messages]
        assert set(shown) == {"text/plain"}, shown  # no widget view: its model is gone
        assert "29 GradNodes" in shown["text/plain"] and "closed" in shown["text/plain"]


def test_a_closed_widget_keeps_its_document(kc: Any, tmp_path: Path) -> None:
    execute(kc, MAKE, None)
    path = tmp_path / "closed.json"
    messages = execute(kc, f"w.save({str(path)!r}); s = w.summary(); w.expand('conv')", None)
    assert messages == [] and path.exists()
