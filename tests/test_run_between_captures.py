"""A watched step between captures recorded in fewer calls (watched.py _record_between,
runs/watch.py between_captures) against the general route (_record, after_backward): the
same run log files and the same layer hooks in every step's forward, on a run with a forward
NaN, a NaN loss, a parameter without a gradient, spikes and captures after anomalies."""

from __future__ import annotations

import shutil

import paddle
from run_models import TinyMLP, train

from paddleviz_widget import trace
from paddleviz_widget.runs.grad_kernel import kernel
from paddleviz_widget.tracer.capture import watched


def _hooks(model: paddle.nn.Layer) -> int:
    return sum(len(m._forward_pre_hooks) + len(m._forward_post_hooks)
               for m in model.sublayers(include_self=True))  # fmt: skip


def _run(tmp_path, name: str):
    """(run dir, hooks in each step's forward, steps where _hooks_off was set with hooks on)"""
    kernel()  # compiled before the run: its clean steps take the one call from the start
    paddle.seed(0)
    model = TinyMLP()
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    plain = _hooks(model)
    path = tmp_path / name
    hooked: dict[int, int] = {}
    wrong: list[int] = []

    def before(step, x):
        hooked[step] = _hooks(model) - plain  # armed (or not) for this step's forward
        if step in (40, 90):
            x[0, 0] = float("nan")  # a forward NaN: its step and the capture after it
        if step == 120:
            opt.set_lr(1.0)  # spikes
        if step in (60, 61):  # a parameter without a gradient at step 60
            model.fc1.bias.stop_gradient = step == 60
            if step == 60:
                model.fc1.bias.clear_gradient(False)

    def after(step, loss):
        if session._hooks_off and _hooks(model) != plain:
            wrong.append(step)
        if step == 199:
            shutil.copy(path / "tail.jsonl", tmp_path / f"{name}-tail.jsonl")
        return step not in (40, 90)

    with trace(model, stats=True, every=25, run_dir=path) as session:
        train(model, opt, 200, before=before, after_backward=after)
    return path, hooked, wrong


def test_steps_between_captures_write_what_the_general_route_writes(tmp_path, monkeypatch):
    calls = []
    original = watched._record_between

    def counted(session, watch, roots):
        calls.append(watch.step)
        original(session, watch, roots)

    monkeypatch.setattr(watched, "_record_between", counted)
    fast, fast_hooks, fast_wrong = _run(tmp_path, "fast")
    monkeypatch.setattr(watched, "_record_between",
                        lambda s, w, r: watched._record(s, w, r, full=False))  # fmt: skip
    general, general_hooks, general_wrong = _run(tmp_path, "general")
    assert len(calls) > 150  # most steps took it
    assert fast_hooks == general_hooks  # hooks on in exactly the same forwards
    on = {s for s, n in fast_hooks.items() if n}
    assert {0, 25, 41, 91, 100} <= on and 30 not in on and len(on) < 30
    assert not fast_wrong and not general_wrong  # _hooks_off only ever with our hooks off
    tails = [(tmp_path / f"{n}-tail.jsonl").read_bytes() for n in ("fast", "general")]
    assert tails[0] == tails[1] and tails[0]
    files = sorted(p.relative_to(fast) for p in fast.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(general) for p in general.rglob("*") if p.is_file())
    for rel in files:
        if rel.suffix == ".parquet" or rel.suffix == ".jsonl":
            assert (fast / rel).read_bytes() == (general / rel).read_bytes(), rel
    assert b"spike" in (fast / "anomalies.jsonl").read_bytes()
    assert b'"step": 40' in (fast / "anomalies.jsonl").read_bytes()
