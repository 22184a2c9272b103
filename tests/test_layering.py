"""The layers stay visible in the tree: the graph model imports no codec back (no cycles in
graph/), and the tracer's stages depend one way only: parse (pure text) <- read (live Paddle
objects) <- capture (running Paddle) <- merge (pure merging) <- build. The widget (widget/) and
the command line (cli/) sit on top, apart: nothing below them imports them, they do not import
each other, and only the GraphWidget class touches the notebook stack (its helpers are plain
functions of the graph document)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "paddleviz_widget"
# A stage may import only from the stages listed for it (and from itself).
ALLOWED = {
    "parse": set(),
    "read": {"parse"},
    "capture": {"parse", "read"},
    "merge": {"parse", "read", "capture"},
}


NOTEBOOK_STACK = {"anywidget", "ipywidgets", "traitlets", "IPython", "comm"}


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports: relative ones resolved to dotted names inside
    paddleviz_widget, absolute ones as written."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join((*base, *(node.module or "").split("."))).rstrip("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _modules() -> dict[str, set[str]]:
    """Every module of the package by its path inside it ("widget/saving.py"), with what it
    imports."""
    return {path.relative_to(PACKAGE).as_posix(): _imports(path) for path in PACKAGE.rglob("*.py")}


def _part(module: str) -> str:
    """The part of the package a dotted name is in ("paddleviz_widget.widget.diff": widget)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "paddleviz_widget" and len(parts) > 1 else ""


def test_the_graph_package_has_no_import_cycle():
    graph = {p.stem: _imports(p) for p in (PACKAGE / "graph").glob("*.py")}
    local = {
        name: {m.rsplit(".", 1)[-1] for m in deps if m.startswith("paddleviz_widget.graph.")}
        for name, deps in graph.items()
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for dep in local.get(start, ()):
            if dep == goal or (dep not in seen and reaches(dep, goal, seen | {dep})):
                return True
        return False

    cycles = [name for name in local if reaches(name, name, {name})]
    assert not cycles, f"import cycles through {cycles}"
    assert "paddleviz_widget.graph.codec" not in graph["parts"]


def test_tracer_stages_depend_one_way():
    wrong = []
    for stage, allowed in ALLOWED.items():
        for path in (PACKAGE / "tracer" / stage).glob("*.py"):
            for module in _imports(path):
                parts = module.split(".")
                if parts[:2] != ["paddleviz_widget", "tracer"] or len(parts) < 3:
                    continue
                if parts[2] != stage and parts[2] not in allowed:
                    wrong.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_folders_exist_as_this_test_knows_them():
    assert (PACKAGE / "widget" / "graph_widget.py").is_file()
    assert (PACKAGE / "cli" / "main.py").is_file()
    assert len(_modules()) > 50


# The parts below the widget and the command line, which import neither.
LOWER = ("tracer", "graph", "export", "sources", "compat", "schema")


def test_the_parts_below_import_neither_widget_nor_cli():
    wrong = [
        f"{path} imports {module}"
        for path, imports in _modules().items()
        if path.split("/")[0] in LOWER
        for module in imports
        if _part(module) in ("widget", "cli")
    ]
    assert not wrong, "\n".join(wrong)


def test_widget_and_cli_do_not_import_each_other():
    wrong = [
        f"{path} imports {module}"
        for path, imports in _modules().items()
        for module in imports
        if {path.split("/")[0], _part(module)} == {"widget", "cli"}
    ]
    assert not wrong, "\n".join(wrong)


def test_the_notebook_stack_stays_in_the_widget_class():
    # build_graph, export and the CLI run without Jupyter; the widget's helpers are plain
    # functions of the graph document, unit-testable without a widget. The exceptions, each
    # talking to Jupyter: the class (and its ways of showing itself, showing.py), the
    # saved-notebook picture that updates the cell's output after display (late_picture.py),
    # and the hidden model that starts the page's explorer before the first widget
    # (page_preload.py).
    talks_to_jupyter = (
        "widget/graph_widget.py",
        "widget/showing.py",
        "widget/late_picture.py",
        "widget/page_preload.py",
    )
    wrong = [
        f"{path} imports {module}"
        for path, imports in _modules().items()
        if path.split("/")[0] in (*LOWER, "cli") or path.startswith("widget/")
        if path not in talks_to_jupyter
        for module in imports
        if module.split(".")[0] in NOTEBOOK_STACK
    ]
    assert not wrong, "\n".join(wrong)
