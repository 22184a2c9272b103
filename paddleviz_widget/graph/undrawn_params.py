"""The model's parameters a graph has no node for, as its document names them: frozen and
unreached ones (``meta.unreached_params``) and those a recompute node hides
(``meta.pylayers[].hidden_params``). The per-layer table counts them in the layer that owns
them, found by name: a parameter "blocks.2.fc.weight" belongs to the deepest group named
"blocks.2.fc", "blocks.2" or "blocks", else to the model's own (root) group. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from math import prod
from typing import Any

from .model import Group


@dataclass(frozen=True)
class UndrawnParam:
    name: str
    numel: int | None  # None: its shape is not in the document (an older one)
    trainable: bool


def undrawn_params(meta: Mapping[str, Any]) -> tuple[list[UndrawnParam], bool]:
    """(the parameters, whether that is all of them): a recompute node whose layer is gone
    hides parameters no one can name, and the document then cannot list them."""
    found: list[UndrawnParam] = []
    for entry in _objects(meta.get("unreached_params")):
        name = entry.get("name")
        if isinstance(name, str):
            trainable = entry.get("frozen") is not True
            found.append(UndrawnParam(name, _numel(entry.get("shape")), trainable))
    complete = True
    for layer in _objects(meta.get("pylayers")):
        if layer.get("class") == "RecomputeFunction" and not layer.get("layer"):
            complete = False
        for entry in _objects(layer.get("hidden_params")):
            name = entry.get("name")
            if isinstance(name, str):  # (recompute hides trainable parameters only)
                found.append(UndrawnParam(name, _numel(entry.get("shape")), True))
    return found, complete


def owner_groups(names: Iterable[str], groups: Iterable[Group]) -> list[str | None]:
    """Per parameter name, the id of the deepest group whose name is a dotted prefix of it,
    else of the one root group; None when there are several roots and no name matches."""
    by_name: dict[str, str] = {}
    roots = []
    for g in groups:
        by_name.setdefault(g.name, g.id)
        if g.parent is None:
            roots.append(g.id)
    root = roots[0] if len(roots) == 1 else None
    out: list[str | None] = []
    for name in names:
        owner, path = root, name
        while "." in path:
            path = path.rsplit(".", 1)[0]
            if path in by_name:
                owner = by_name[path]
                break
        out.append(owner)
    return out


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _numel(shape: Any) -> int | None:
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        return None
    return int(prod(shape))
