"""A finding of problems(): what is wrong, where (layer path, parameter or GradNode, call site)
and how badly. Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEVERITIES = ("problem", "info")


@dataclass(frozen=True)
class Problem:
    # "nonfinite", "exploding", "vanishing", "zero", "none", "unreached", "frozen"
    kind: str
    name: str  # a parameter name, or the GradNode's name
    reason: str
    node: str | None = None  # node id in the graph, when it has one
    layer: str | None = None  # the layer path ("encoder.layers.3.mlp"), when known
    severity: str = "problem"  # "info": worth knowing, not wrong (a parameter frozen on purpose)
    factor: float | None = None  # exploding/vanishing: how much the gradient grew or shrank
    affected: tuple[str, ...] = ()  # what else this one explains (parameters, layers)
    site: str | None = None  # "file:line" of the forward call

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "name": self.name, "node": self.node, "reason": self.reason,
            "layer": self.layer, "severity": self.severity, "factor": self.factor,
            "affected": list(self.affected), "site": self.site,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Problem:
        return cls(
            str(d["kind"]), str(d["name"]), str(d["reason"]), d.get("node"), d.get("layer"),
            str(d.get("severity", "problem")), d.get("factor"),
            tuple(d.get("affected") or ()), d.get("site"),
        )  # fmt: skip

    def line(self) -> str:
        """Layer path first, then the parameter or GradNode, then the call site."""
        # A parameter's name already starts with its layer's path ("encoder.fc.weight"); a
        # finding named by its layer alone (an exploding layer no op of which has a factor)
        # is that path.
        named = (
            self.layer is None or self.name == self.layer or self.name.startswith(f"{self.layer}.")
        )
        where = self.name if named else f"{self.layer} / {self.name}"
        at = f" ({self.site})" if self.site else ""
        return f"{self.kind:<10} {where}{at}: {self.reason}"
