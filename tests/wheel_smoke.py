"""Run by tests/test_wheel_install.py with the Python of a fresh virtual environment where
paddleviz_widget was installed from its wheel, and with no Node.js on PATH:

    python -I tests/wheel_smoke.py OUT_DIR

(-I: neither the script's directory nor PYTHONPATH is on sys.path, so the source tree's
paddleviz_widget cannot shadow the installed one.) Traces the seed LeNet, builds a GraphWidget
with its layers open one level deep, saves it as OUT_DIR/lenet.html (the self-contained
explorer, made of the installed static files) and writes OUT_DIR/report.json: where node/npm
and paddleviz_widget were found, and the graph document.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


DEPTH = 1  # the saved page opens on conv and fc, their sublayers collapsed


def main(out: Path) -> None:
    found = {tool: shutil.which(tool) for tool in ("node", "npm", "npx")}

    import paddle

    import paddleviz_widget
    from paddleviz_widget import GraphWidget, trace

    sys.path.insert(0, str(TESTS))  # only now: the seed model, from tests/models.py
    from models import LeNet

    paddle.seed(0)
    model, x = LeNet(), paddle.randn([1, 3, 32, 32])
    with trace(model):
        y = model(x)
        y.sum().backward()
    w = GraphWidget(y, model=model, depth=DEPTH)
    w.save(out / "lenet.html")
    report = {
        "tools": found,
        "prefix": sys.prefix,
        "package": str(Path(paddleviz_widget.__file__).resolve().parent),
        "depth": DEPTH,
        "graph": w.graph,
    }
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
