"""A refresh of a run being written sends the page only the steps appended since the last
send, not the whole run again: at 10,000 steps x 500 layers the matrices are 30 MB, and the
browser takes a websocket message in one task, in proportion to its bytes, so every refresh
(each 5 s) froze the page for 1-2 s (round 24's bug bash).

The message: ``{"type": APPEND_MESSAGE, "run": <description>, "from": <steps before>}`` with
buffers [steps, loss, norms, bad], each the part after the old bytes (js/run_append.ts joins
them onto the page model's). The kernel's traits still take the whole new state, unsent (the
page has it once joined; a page that asks again, pvw-resend, gets it whole)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

APPEND_MESSAGE = "pvw-run-append"
#: The buffers of a run's state (view_data.run_buffers), by trait, in the message's order.
BUFFER_TRAITS = ("_steps", "_loss", "_norms", "_bad")
#: float64 steps: the steps before, from the old buffer's length.
STEP_BYTES = 8


def appended(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[dict, list[bytes]] | None:
    """The append message from state ``old`` to ``new`` (trait name -> value), or None when
    ``new`` is not ``old`` with steps added at the end (another layer set, a rewritten step,
    nothing new): then the whole state is sent as before."""
    old_layers = (old.get("run") or {}).get("layers")
    if old_layers is None or old_layers != (new.get("run") or {}).get("layers"):
        return None
    if len(new["_steps"]) <= len(old["_steps"]):
        return None
    tails = []
    for name in BUFFER_TRAITS:
        before, after = bytes(old[name]), bytes(new[name])
        if not after.startswith(before):
            return None
        tails.append(after[len(before) :])
    message = {"type": APPEND_MESSAGE, "run": new["run"], "from": len(old["_steps"]) // STEP_BYTES}
    return message, tails
