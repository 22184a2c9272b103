"""One problem found in a run's gradient summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = ("nonfinite", "spike", "vanishing")


@dataclass(frozen=True)
class Anomaly:
    step: int
    kind: str  # one of KINDS
    layer: str  # layer path; "" for the whole model (total norm, the loss)
    params: list[str] = field(default_factory=list)
    value: float = float("nan")  # what was seen (a norm, a ratio, a count)
    threshold: float = float("nan")  # what it was compared with
    message: str = ""  # the words problems() shows

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "layer": self.layer,
                "params": list(self.params), "value": _num(self.value),
                "threshold": _num(self.threshold), "message": self.message}  # fmt: skip

    @staticmethod
    def from_json(value: dict[str, Any]) -> Anomaly:
        return Anomaly(
            int(value["step"]), str(value["kind"]), str(value.get("layer", "")),
            [str(p) for p in value.get("params", [])], _float(value.get("value")),
            _float(value.get("threshold")), str(value.get("message", "")),
        )  # fmt: skip


def _num(x: float) -> float | None | str:
    if x != x:
        return None
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def _float(x: Any) -> float:
    return float("nan") if x is None else float(x)
