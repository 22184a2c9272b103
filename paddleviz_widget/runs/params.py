"""What a run log says about each parameter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ParamInfo:
    name: str  # as model.named_parameters() names it
    layer: str  # the sublayer that owns it ("" for the model itself)
    shape: tuple[int, ...]
    dtype: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "layer": self.layer, "shape": list(self.shape),
                "dtype": self.dtype}  # fmt: skip

    @staticmethod
    def from_json(value: dict[str, Any]) -> ParamInfo:
        return ParamInfo(
            str(value["name"]), str(value["layer"]), tuple(int(d) for d in value["shape"]),
            str(value["dtype"]),
        )  # fmt: skip


def model_params(model: Any) -> tuple[list[ParamInfo], list[Any]]:
    """The model's trainable parameters in registration order (usually the forward's), and
    the parameter tensors themselves."""
    infos, tensors = [], []
    for name, p in model.named_parameters():
        if p.stop_gradient:
            continue
        layer = name.rsplit(".", 1)[0] if "." in name else ""
        dtype = str(p.dtype).replace("paddle.", "")
        infos.append(ParamInfo(name, layer, tuple(int(d) for d in p.shape), dtype))
        tensors.append(p)
    return infos, tensors


def layer_order(params: list[ParamInfo]) -> list[str]:
    seen: dict[str, None] = {}
    for p in params:
        seen.setdefault(p.layer, None)
    return list(seen)
