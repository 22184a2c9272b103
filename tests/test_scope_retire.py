"""Recording._retire lets go of the layers no kept forward needs; when every layer the retired
forward called is called by a kept forward too (a training loop), it skips the search. Checked
against the search done every time (the rule written out below), on random sequences of
nested layer calls, forwards and backward passes: the same layers, callers and call sites
kept, in the same order, after every step."""

from __future__ import annotations

import random

from paddleviz_widget.tracer.capture import scope_recording
from paddleviz_widget.tracer.capture.scope_recording import Recording


class _Layer:
    def __init__(self, k: int) -> None:
        self.k = k


class _Searching(Recording):
    """The search for layers to let go of, made on every retirement; counts retirements that
    let some layer go and those that let none go."""

    let_go = kept_all = 0

    def _retire(self, forward: scope_recording._Forward) -> None:
        for ptr in forward.claimed:
            self.owner.pop(ptr, None)
        forward.claimed, forward.names, forward.by, forward.nodes = [], [], [], []
        keep: set[int] = set()
        for f in self.forwards:
            keep |= f.layers
        for key in list(keep):
            parent = self.caller.get(key)
            while parent is not None and parent not in keep:
                keep.add(parent)
                parent = self.caller.get(parent)
        gone = [k for k in self.layers if k not in keep]
        if gone:
            _Searching.let_go += 1
        else:
            _Searching.kept_all += 1
        for key in gone:
            del self.layers[key]
            self.caller.pop(key, None)
            self.sites.pop(key, None)


def _state(rec: Recording) -> tuple[list[int], dict[int, int | None], list[int]]:
    return list(rec.layers), dict(rec.caller), list(rec.sites)


def _forward(recs: list[Recording], rng: random.Random, layers: list[_Layer], depth: int) -> None:
    """One call of a random layer, calling 0-3 random layers inside it (two levels deep)."""
    layer = rng.choice(layers)
    for rec in recs:
        rec.enter(layer, (), {})
    if depth < 2:
        for _ in range(rng.randint(0, 3)):
            _forward(recs, rng, layers, depth + 1)
    for rec in recs:
        rec.exit(layer, None)


def test_retiring_keeps_what_the_search_keeps() -> None:
    rng = random.Random(11)
    for case in range(300):
        layers = [_Layer(k) for k in range(rng.randint(2, 12))]
        ours, searching = Recording(), _Searching()
        # a training loop's layers; now and then one made anew (a loss layer each step), or
        # one no longer called
        for _ in range(rng.randint(1, 30)):
            if rng.random() < 0.3:
                layers.append(_Layer(len(layers)))
            if rng.random() < 0.2 and len(layers) > 1:
                layers.pop(rng.randrange(len(layers)))
            _forward([ours, searching], rng, layers, 0)
            if rng.random() < 0.6:
                ours.end_epoch()
                searching.end_epoch()
            assert _state(ours) == _state(searching), case
    # both kinds of retirement were met, many times
    assert _Searching.let_go > 200 and _Searching.kept_all > 200, (
        _Searching.let_go,
        _Searching.kept_all,
    )
