"""Documents ``build_graph`` makes for the oracle models (tests/oracle_models.py), on every path
the annotation step takes: the fresh graph (replayed backward), after backward without trace(),
inside trace() and trace(stats=True). Written as one JSON file, so a refactor of the annotation
step can be compared with the branch before it (``meta.sources``/edge ``src`` can be left out):

    PYTHONPATH=. python tests/annotation_snapshot.py OUT.json
    PYTHONPATH=. python tests/annotation_snapshot.py --compare BEFORE.json [--without-sources]
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import oracle_models as om  # noqa: E402
import paddle  # noqa: E402

from paddleviz_widget import build_graph, trace  # noqa: E402

CASES = ("lenet", "resnet18", "tied", "two_outputs_summed", "two_outputs_listed", "branch_cut",
         "pylayer", "lstm", "transformer_encoder", "inplace", "double_backward")  # fmt: skip
FRESH = ("lenet_and_input", "tied_and_input", "transformer_and_input", "nested_and_input")


def _normal(doc: dict[str, Any], without_sources: bool) -> dict[str, Any]:
    """Addresses vary by run: dropped. The source record, if asked, too."""
    for node in doc["nodes"]:
        node.pop("ptr", None)
    if without_sources:  # and the schema version that added the node sources (2.3)
        doc.pop("schema_version", None)
        doc["meta"].pop("sources", None)
        for edge in doc["edges"]:
            edge.pop("src", None)
    text = re.sub(r"0x[0-9a-f]+|(?<=_)[0-9a-f]{8,16}\b", "@", json.dumps(doc))
    return json.loads(text)


def documents(without_sources: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in FRESH:
        model, x = getattr(om, name)()
        out[f"fresh/{name}"] = build_graph(model(x), model=model)
    for name in CASES:
        for label, knobs in (("plain", None), ("trace", {}), ("stats", {"stats": True})):
            paddle.seed(0)
            case = getattr(om, name)()
            with tempfile.TemporaryDirectory() as d:
                if knobs is None:
                    y = case.run(d)
                else:
                    with trace(case.model, **knobs):
                        y = case.run(d)
                out[f"{label}/{name}"] = build_graph(y, model=case.model)
    return {k: _normal(v, without_sources) for k, v in out.items()}


def main() -> None:
    args = sys.argv[1:]
    if args[0] == "--compare":
        before = json.loads(Path(args[1]).read_text())
        now = documents(without_sources="--without-sources" in args)
        if "--without-sources" in args:
            for doc in before.values():
                doc.pop("schema_version", None)
                doc["meta"].pop("sources", None)
        bad = [k for k in before if before[k] != now.get(k)]
        print(f"{len(before) - len(bad)}/{len(before)} documents unchanged; differ: {bad}")
        sys.exit(1 if bad else 0)
    Path(args[0]).write_text(json.dumps(documents(), sort_keys=True, indent=1))


if __name__ == "__main__":
    main()
