"""Parameters no gradient reached: "none" (its senders ran and sent nothing), "unreached" (not
in this backward graph: an unused layer, a detached branch), and "frozen" (stop_gradient=True,
information: usually on purpose). Running statistics (BatchNorm's) never appear: the tracer
leaves them out of meta.unreached_params."""

from __future__ import annotations

from .flow import Flow
from .problem import Problem

NONE_REASON = "no gradient reached it in this backward"


def _layer(name: str) -> str | None:
    return name.rsplit(".", 1)[0] if "." in name else None


def unreached(flow: Flow) -> list[Problem]:
    found = []
    for n in flow.graph.nodes:
        if n.grad_status == "none":
            name = n.param.name if n.param is not None else n.name
            found.append(Problem("none", name, NONE_REASON, n.id, flow.layer_of(n.id)))
    for entry in flow.graph.meta.get("unreached_params") or []:
        name = str(entry.get("name"))
        # Documents from before "frozen" was written said so in the reason only.
        frozen = bool(entry.get("frozen")) or str(entry.get("reason")).startswith("stop_gradient")
        found.append(
            Problem("frozen" if frozen else "unreached", name, str(entry.get("reason")),
                    layer=_layer(name), severity="info" if frozen else "problem")
        )  # fmt: skip
    return found
