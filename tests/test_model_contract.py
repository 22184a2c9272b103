"""The synced models' contracts against the Python side: js/model_contract.ts against
GraphWidget's traits tagged sync=True (names and types) and the state a saved page writes for
its stand-in model (export/standalone.py); js/run_model_contract.ts against RunWidget's. A
trait added, renamed or retyped on one side only fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from paddleviz_widget import GraphWidget
from paddleviz_widget.export.standalone import standalone_html
from paddleviz_widget.runs.view_widget import RunWidget

JS = Path(__file__).resolve().parents[1] / "js"
CONTRACT = JS / "model_contract.ts"
RUN_CONTRACT = JS / "run_model_contract.ts"
# One line per key in MODEL_KEYS: `name: { type: "...", writer: "..." },`
KEY = re.compile(r'^\s*(\w+): \{ type: "(\w+)", writer: "([\w ]+)" \},$', re.M)
JSON_TYPES = {
    traitlets.Dict: "object",
    traitlets.Unicode: "string",
    traitlets.List: "array",
    traitlets.Int: "integer",
    traitlets.Bool: "boolean",
    traitlets.Bytes: "bytes",
}
STATE = re.compile(r'<script type="application/json" id="pvw-state">(.*?)</script>', re.S)


def _contract(path: Path = CONTRACT, name: str = "MODEL_KEYS") -> dict[str, tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    block = text[text.index(f"export const {name} = {{") :]
    block = block[: block.index("} as const")]
    keys = {name: (kind, writer) for name, kind, writer in KEY.findall(block)}
    lines = [ln for ln in block.splitlines()[1:] if ln.strip()]
    assert len(keys) == len(lines), f"a {name} line this test cannot read: {lines}"
    return keys


def _widget_traits(widget: type[anywidget.AnyWidget] = GraphWidget) -> dict[str, Any]:
    """A widget's own synced traits (not those every anywidget has: _esm, layout, ...; nor
    _bundle, the explorer's source that the `_esm` loader imports: js/widget_loader.ts)."""
    base = {*anywidget.AnyWidget.class_traits(sync=True), "_bundle"}
    return {k: t for k, t in widget.class_traits(sync=True).items() if k not in base}


def test_every_synced_trait_is_in_the_contract_with_its_type() -> None:
    contract = _contract()
    traits = _widget_traits()
    from_kernel = {k for k, (_, writer) in contract.items() if writer != "saved page"}
    assert set(traits) == from_kernel, (
        "GraphWidget's synced traits and js/model_contract.ts disagree: "
        f"only in Python {sorted(set(traits) - from_kernel)}, "
        f"only in TypeScript {sorted(from_kernel - set(traits))}"
    )
    for name, trait in traits.items():
        assert JSON_TYPES[type(trait)] == contract[name][0], name


def test_a_saved_page_sets_only_contract_keys_and_the_ones_only_it_writes() -> None:
    graph = json.loads(
        (Path(__file__).parent / "fixtures" / "graphs" / "lenet.json").read_text(encoding="utf-8")
    )
    (state_text,) = STATE.findall(standalone_html(graph))
    state = json.loads(state_text)
    contract = _contract()
    assert set(state) <= set(contract), sorted(set(state) - set(contract))
    saved_only = {k for k, (_, writer) in contract.items() if writer == "saved page"}
    assert saved_only <= set(state)


def test_the_request_is_the_kernels_and_the_answer_the_pages() -> None:
    contract = _contract()
    assert contract["_request"][1] == "kernel"
    assert contract["_resolved"][1] == "page"
    assert contract["_view_options"][1] == "page"


def test_every_run_widget_trait_is_in_the_run_contract_with_its_type() -> None:
    contract = _contract(RUN_CONTRACT, "RUN_MODEL_KEYS")
    traits = _widget_traits(RunWidget)
    from_kernel = {k for k, (_, writer) in contract.items() if writer != "saved page"}
    assert set(traits) == from_kernel, (
        "RunWidget's synced traits and js/run_model_contract.ts disagree: "
        f"only in Python {sorted(set(traits) - from_kernel)}, "
        f"only in TypeScript {sorted(from_kernel - set(traits))}"
    )
    for name, trait in traits.items():
        assert JSON_TYPES[type(trait)] == contract[name][0], name
