"""Exploding gradients: the innermost layer (holding ops or parameters of its own, not a pure
container) whose backward multiplies the gradient by more than EXPLODING_FACTOR (what leaves
it toward the inputs over what entered it), named with the op inside it that grows it most;
and a total parameter-gradient norm far above the gradient the model got from the loss. The
raw norm alone misleads: the culprit layer's own parameters can have the smallest gradient,
and the layers behind it the largest."""

from __future__ import annotations

from .flow import Flow, combined, group_factor, node_factor, norm_of
from .problem import Problem
from .thresholds import EXPLODING_FACTOR, EXPLODING_TOTAL_RATIO


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _growing_op(flow: Flow, gid: str) -> tuple[str | None, float | None]:
    best: tuple[str | None, float | None] = (None, None)
    for n in flow.graph.nodes:
        if n.kind != "op" or not flow.chain[n.id] or flow.chain[n.id][0] != gid:
            continue
        f = node_factor(flow, n.id)
        if f is not None and (best[1] is None or f > best[1]):
            best = (n.id, f)
    return best


NORM_CAUSE = (
    "a normalisation multiplies the gradient by its scale over its input's spread: a "
    "small spread (few values per channel, near-constant inputs) or a large scale"
)
WEIGHTS_GUESS = "weights initialised or grown too large?"


def _why(op_name: str) -> str:
    """The likely cause, by the op that grows the gradient most."""
    if "Norm" in op_name:  # BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RMSNorm grads
        return NORM_CAUSE
    return WEIGHTS_GUESS


def _innermost(flow: Flow, gids: dict[str, float]) -> dict[str, float]:
    """Drop a group when a group inside it is flagged too: the inner one explains it."""
    inner_of = {a for g in gids for a in flow.ancestors(g)}
    return {g: f for g, f in gids.items() if g not in inner_of}


def model_input_norm(flow: Flow) -> float | None:
    """The gradient the model's outermost groups received from outside (from the loss)."""
    tops = {g.id for g in flow.graph.groups if g.parent is None}
    edges = [e for g in tops for e in flow.group_in.get(g, [])]
    return norm_of(edges)


def exploding(flow: Flow) -> list[Problem]:
    # Layers that hold an op or a parameter of their own: a pure container (Sequential,
    # LayerList) only multiplies its children's factors, which would add up over a deep stack.
    owning = {chain[0] for chain in flow.chain.values() if chain}
    flagged = {}
    for g in flow.graph.groups:
        if g.id not in owning:
            continue
        f = group_factor(flow, g.id)
        if f is not None and f > EXPLODING_FACTOR:
            flagged[g.id] = f
    found = []
    for gid, f in _innermost(flow, flagged).items():
        op, op_f = _growing_op(flow, gid)
        node = flow.nodes[op] if op is not None else None
        grows = f" (most at {node.name}, x{_fmt(op_f)})" if node and op_f else ""
        reason = (
            f"the gradient grows x{_fmt(f)} going backward through this layer{grows}: above "
            f"x{_fmt(EXPLODING_FACTOR)}, exploding gradients ({_why(node.name if node else '')}); "
            "the layers before it get its blown-up gradient"
        )
        found.append(Problem("exploding", node.name if node else flow.group_name[gid], reason,
                             op, flow.group_name[gid], factor=f,
                             site=flow.site_of(op) if op else None))  # fmt: skip
    received = model_input_norm(flow)
    params = [e for e in flow.graph.edges if flow.nodes[e.target].kind == "param"
              and flow.nodes[e.target].param is not None]  # fmt: skip
    total = norm_of(params)
    if received and total is not None and total / received > EXPLODING_TOTAL_RATIO:
        ratio = total / received
        reason = (
            f"the parameters' total gradient norm is {_fmt(total)}, x{_fmt(ratio)} the gradient "
            f"the model's output got from the loss ({_fmt(received)}): above "
            f"x{_fmt(EXPLODING_TOTAL_RATIO)}, far above healthy scale"
        )
        found.append(Problem("exploding", "total gradient norm", reason, factor=ratio))
    return found


__all__ = ["exploding", "combined"]
