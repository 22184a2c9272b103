"""The layers stay visible in the tree: the graph model imports no codec back (no cycles in
graph/), and the tracer's stages depend one way only: parse (pure text) <- read (live Paddle
objects) <- capture (running Paddle) <- merge (pure merging) <- build."""

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


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports, resolved to dotted names inside paddleviz_widget."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join((*base, *(node.module or "").split("."))).rstrip("."))
    return found


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
