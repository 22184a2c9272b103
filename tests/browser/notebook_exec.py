"""Run a notebook's code cells in the test process, to know what it should display."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any


def displayed_values(notebook: Path, namespace: dict[str, Any] | None = None) -> list[Any]:
    """Exec every code cell in one namespace, like a kernel would; return the value of each
    cell whose last statement is an expression (what Jupyter displays as the cell's result).
    Plain Python only: IPython magics and shell escapes are not supported. ``namespace``, if
    given, is the one the cells run in (to read their variables afterwards).
    """
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    if namespace is None:
        namespace = {}
    namespace.setdefault("__name__", "__main__")
    values = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse(source, filename=f"{notebook.name}[{index}]")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, f"{notebook.name}[{index}]", "exec"), namespace)
        if last is not None:
            expr = ast.Expression(last.value)
            values.append(eval(compile(expr, f"{notebook.name}[{index}]", "eval"), namespace))
    return values
