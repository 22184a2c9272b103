"""Where the first NaN/Inf was made: a GradNode of the backward (meta.first_nonfinite), or,
when the loss was already NaN/Inf, the first layer whose forward output held one
(meta.forward_nonfinite, from trace(model, stats=True)'s per-layer check)."""

from __future__ import annotations

from typing import Any

from .flow import Flow
from .problem import Problem

# GradNodes of ops that can make a NaN/Inf from finite inputs (log of <= 0, sqrt of < 0, a
# division by 0, exp overflow, ...): named as the suspects inside the culprit layer.
MAKERS = ("Log", "Sqrt", "Rsqrt", "Divide", "Pow", "ElementwisePow", "Exp", "Reciprocal",
          "Acos", "Asin", "Atanh", "Acosh", "Lgamma", "Digamma", "Tan")  # fmt: skip
FLAGS_HINT = "paddle.set_flags({'FLAGS_check_nan_inf': 1}) makes Paddle name the forward op"
# The same ops inside a compiled program (their backward ops there are "<op>_grad").
PROGRAM_MAKERS = frozenset({"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "divide", "pow",
                            "elementwise_pow", "exp", "expm1", "reciprocal", "acos", "asin",
                            "atanh", "acosh", "lgamma", "digamma", "tan"})  # fmt: skip
PROGRAM_GROUP = "to_static program"  # tracer/merge/program_ops.PROGRAM_GROUP_TYPE
PROGRAM_NODES = ("Dy2StGradNode", "RunProgramGradNode")  # tracer/read/program_nodes.py
# Backward ops that make a NaN/Inf from finite gradients and inputs (sqrt'(0), 1/0, ...).
BACKWARD_MAKERS = frozenset(f"{op}_grad" for op in (
    "sqrt", "rsqrt", "log", "log2", "log10", "log1p", "divide", "pow", "elementwise_pow",
    "reciprocal", "acos", "asin", "atanh", "acosh", "tan"))  # fmt: skip


def _in_program_backward(flow: Flow, program: str) -> Problem | None:
    """A NaN/Inf gradient made inside a compiled program: hooks see only what enters and
    leaves it; named when exactly one of its ops can make one from finite values."""
    node = flow.nodes[program]
    ops = [n for n in flow.graph.nodes if n.kind == "program_op" and n.ptr == node.ptr]
    suspects = [n for n in ops if n.name in BACKWARD_MAKERS]
    if len(suspects) != 1:
        return None
    (op,) = suspects
    groups = {g.id: g for g in flow.graph.groups}
    group = groups.get(op.group or "")
    in_layer = group is not None and group.type != PROGRAM_GROUP
    layer = group.name if in_layer and group is not None else flow.layer_of(program)
    reason = (
        f"the first NaN/Inf gradient was made inside this compiled program ({node.name}) "
        "from finite ones; hooks see only the gradients entering and leaving it, and the only "
        f"one of its {len(ops)} ops that can make one from finite values is {op.name} "
        f"(the backward of {_forward_op(op.name)})"
    )
    return Problem("nonfinite", op.name, reason, op.id, layer,
                   site=flow.site_of(op.id) or flow.site_of(program))  # fmt: skip


def _program_own_ops(flow: Flow, entry: dict[str, Any]) -> list[str]:
    """The program ops a layer's own forward code made (found inside a compiled program):
    those whose forward line is in the layer's forward code, except the ops placed in another
    layer (its sublayers', whose outputs were finite: the re-run checked each)."""
    source = entry.get("source")
    if not isinstance(source, dict):
        return []
    layer = entry.get("layer")
    groups = {g.id: g for g in flow.graph.groups}
    own = []
    for n in flow.graph.nodes:
        site, group = n.call_site, groups.get(n.group or "")
        if n.kind != "program_op" or site is None or site.file != source.get("file"):
            continue
        if not source.get("first", 0) <= site.line <= source.get("last", -1):
            continue
        if group is not None and group.type != PROGRAM_GROUP and group.name != layer:
            continue
        own.append(n.id)
    return own


def _forward_op(name: str) -> str:
    return name.removesuffix("_grad")


def _maker(flow: Flow, node_id: str) -> bool:
    n = flow.nodes[node_id]
    if n.kind == "program_op":
        return _forward_op(n.name) in PROGRAM_MAKERS
    return n.name.startswith(MAKERS)


def _shown(flow: Flow, node_id: str) -> tuple[str, str]:
    """(name, as said in the line): a program's op by its forward op, an eager GradNode as is."""
    n = flow.nodes[node_id]
    if n.kind == "program_op":
        return _forward_op(n.name), f"{_forward_op(n.name)} ({n.name} in the program)"
    return n.name, n.name


def _in_program(flow: Flow, entry: dict[str, Any], first_held: str, at: str | None) -> Problem:
    """A culprit found inside a compiled program (or not: then found_by says why)."""
    layer = str(entry.get("layer"))
    found_by = str(entry.get("found_by"))
    kind = str(entry.get("layer_type"))
    if entry.get("layer") == entry.get("program") and "not named" in found_by:
        reason = f"this {kind}'s forward output was the first to hold a NaN/Inf, {found_by}; "
        return Problem("nonfinite", kind, reason + FLAGS_HINT, None, layer, site=at)
    # Its ops: those SOT still ran eagerly (in its layer group), and its program ops.
    eager = [o for o in entry.get("ops") or () if o in flow.nodes
             and flow.nodes[o].name not in PROGRAM_NODES]  # fmt: skip
    ops = eager + _program_own_ops(flow, entry)
    suspects = [o for o in ops if _maker(flow, o)]
    if len(ops) == 1 or len(suspects) == 1:
        op = ops[0] if len(ops) == 1 else suspects[0]
        name, said = _shown(flow, op)
        how = "its only op" if len(ops) == 1 else (
            f"the only one of its {len(ops)} ops that can make a NaN/Inf from finite values"
        )  # fmt: skip
        reason = f"{first_held}: by {said}, {how}"
        return Problem("nonfinite", name, f"{reason}; {found_by}", op, layer,
                       site=flow.site_of(op) or at)  # fmt: skip
    named = ", ".join(_shown(flow, o)[0] for o in suspects)
    which = (
        f"one of its {len(ops)} ops made it" + (f" (those that can make one from finite "
                                                f"values: {named})" if named else "")
        if ops else "which op is not known"
    )  # fmt: skip
    source = entry.get("source")
    site = f"{source['file']}:{source['first']}" if isinstance(source, dict) else at
    reason = f"{first_held}: {which}; {found_by}; {FLAGS_HINT}"
    return Problem("nonfinite", kind, reason, None, layer, site=site)


def _forward(flow: Flow, first: str, entry: dict[str, Any]) -> Problem:
    layer = str(entry.get("layer"))
    site = entry.get("call_site")
    at = f"{site['file']}:{site['line']}" if isinstance(site, dict) else None
    ops = [o for o in entry.get("ops") or () if o in flow.nodes]
    if not entry.get("inputs_finite", True):
        reason = (
            "the model's input already held a NaN/Inf: it came with the data, before any "
            "layer of the model ran"
        )
        return Problem("nonfinite", str(entry.get("layer_type")), reason, None, layer, site=at)
    kind = str(entry.get("layer_type"))
    bad = [str(n) for n in entry.get("bad_params") or ()]
    if bad:  # not made by this forward: its ops ran on weights already NaN/Inf
        reason = (
            f"this {kind}'s own parameters already held a NaN/Inf when it ran "
            f"({', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}): an earlier step's update "
            "wrote them (the optimizer applied a NaN/Inf gradient), not an op of this forward; "
            "the cause is at the first step whose gradients held NaN/Inf (a watched run's "
            "run.problems() names it)"
        ) + (f"; {entry['found_by']}" if entry.get("found_by") else "")  # inside a program
        return Problem("nonfinite", kind, reason, None, layer, site=at)
    before = entry.get("before")
    first_held = (
        f"the first NaN/Inf of the forward was made by this {kind}'s own code, before it "
        f"called {before}"
        if before else f"this {kind}'s forward output was the first to hold a NaN/Inf"
    )  # fmt: skip
    if entry.get("program") is not None:
        return _in_program(flow, entry, first_held, at)
    if entry.get("found_by"):  # a compiled program hid where it was made: said, not guessed
        reason = f"{entry['found_by']}; {FLAGS_HINT}"
        return Problem("nonfinite", kind, reason, None, layer, site=at)
    programs = [o for o in ops if flow.nodes[o].name in PROGRAM_NODES]
    if programs:  # part of it ran as a program SOT compiled: its ops are not all seen
        reason = (
            f"{first_held}: made by its own code, part of which ran as a compiled program "
            f"(SOT, {flow.nodes[programs[0]].name}) whose ops hooks cannot see; {FLAGS_HINT}"
        )
        return Problem("nonfinite", kind, reason, programs[0], layer, site=at)
    suspects = [o for o in ops if flow.nodes[o].name.startswith(MAKERS)]
    if len(ops) == 1 or len(suspects) == 1:
        op = flow.nodes[ops[0] if len(ops) == 1 else suspects[0]]
        how = "its only op" if len(ops) == 1 else (
            f"the only one of its {len(ops)} ops that can make a NaN/Inf from finite values"
        )  # fmt: skip
        reason = f"{first_held}: by {op.name}, {how}"
        return Problem("nonfinite", op.name, reason, op.id, layer, site=flow.site_of(op.id) or at)
    named = ", ".join(flow.nodes[o].name for o in suspects)
    which = (
        f"one of its {len(ops)} ops made it, which a per-layer check cannot tell"
        + (f" (those that can make one from finite values: {named})" if named else "")
        if ops else "which op is not known"
    )  # fmt: skip
    reason = f"{first_held}: {which}; {FLAGS_HINT}"
    return Problem("nonfinite", kind, reason, None, layer, site=at)


def nonfinite(flow: Flow) -> list[Problem]:
    meta = flow.graph.meta
    first = meta.get("first_nonfinite")
    if not isinstance(first, str):
        return []
    entry = meta.get("forward_nonfinite")
    if meta.get("nonfinite_in_forward") and isinstance(entry, dict):
        return [_forward(flow, first, entry)]
    node = flow.nodes.get(first)
    if node is not None and node.name in PROGRAM_NODES and not meta.get("nonfinite_in_forward"):
        inside = _in_program_backward(flow, first)
        if inside is not None:
            return [inside]
    name = node.name if node is not None else first
    site = flow.site_of(first)
    if meta.get("nonfinite_in_forward") and name in PROGRAM_NODES:
        # A compiled function's program (to_static of a function calling the model): no
        # layer call of it is seen, so no layer check ran.
        reason = (
            "the loss was already NaN/Inf when the backward started: this compiled program's "
            "forward made it, and hooks see no layer call inside a compiled function; compile "
            "the model itself (paddle.jit.to_static(model)) to have trace(model, stats=True) "
            f"name the layer, or {FLAGS_HINT}"
        )
    elif meta.get("nonfinite_in_forward"):
        # No gradient was finite: the op that made the NaN/Inf ran in the forward, at or
        # before this one, and only the forward's values could name it.
        reason = (
            "the loss was already NaN/Inf when the backward started: the forward made it, at "
            f"or before this op; trace(model, stats=True) names the layer, {FLAGS_HINT}"
        )
    elif meta.get("nonfinite_after_user_hook") is True:
        reason = (
            "the first NaN/Inf gradient appears here, but what reached this op passed through "
            "a hook of yours (Tensor.register_hook) on its input: the hook or this op made it"
        )
    else:
        reason = "the first NaN/Inf gradient was made here from finite ones"
        scaled = _scaler_handles(meta.get("loss_scale"))
        if scaled is not None:  # an overflow of the loss scaling: the scaler skips the step
            reason += (
                f", in gradients scaled by the GradScaler's loss scale {scaled:g}: an overflow "
                "of the scaled values, which the scaler handles (it skips this step and lowers "
                "its scale); a problem if it stays once the scale is down to 1"
            )
            return [Problem("nonfinite", name, reason, first, flow.layer_of(first), "info",
                            site=site)]  # fmt: skip
    return [Problem("nonfinite", name, reason, first, flow.layer_of(first), site=site)]


def _scaler_handles(entry: Any) -> float | None:
    """meta.loss_scale's scale when a NaN/Inf made in the backward is the GradScaler's to
    handle (dynamic scaling, a scale above 1: tracer/capture/loss_scaling.py), else None."""
    if not isinstance(entry, dict) or entry.get("dynamic") is not True:
        return None
    scale = entry.get("scale")
    return float(scale) if isinstance(scale, (int, float)) and scale > 1 else None
