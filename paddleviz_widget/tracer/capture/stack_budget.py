"""How many ops of a process may run with Paddle's per-op Python stacks (call sites).

While FLAGS_call_stack_level is 3, Paddle 3.x formats a Python stack for every op and keeps
it for the life of the process (the list is never released: ~2 KB an op in a script, more in
a notebook, whose stacks are deeper; measured in benchmarks/RESULTS.md "Round 23"). Each
trace() asks for stacks in its first backward passes only, but a long notebook session that
traces again and again would keep growing: a llama of 2.5k GradNodes ~6 MB a trace. So a
process gets per-op call sites for its first BUDGET GradNodes traced with stacks; later
traces give each op the line that called its layer, as big models and later steps always
do. ``trace(model, call_sites=True)`` asks for them anyway.
"""

from __future__ import annotations

BUDGET = 20_000  # GradNodes traced with per-op stacks per process (~40 MB at ~2 KB each)

_spent = [0]


def stacks_allowed() -> bool:
    return _spent[0] < BUDGET


def spend(nodes: int) -> None:
    """A backward of ``nodes`` GradNodes ran while per-op stacks were on."""
    _spent[0] += nodes


def spent() -> int:
    return _spent[0]


def reset() -> None:
    """A fresh budget (tests: each test as if in a process of its own)."""
    _spent[0] = 0
