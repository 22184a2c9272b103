"""A training loop inside one trace() keeps what the session holds bounded, annotates the step
it is asked about, and never lets a record of freed nodes annotate a graph that reuses their
addresses (issue 11, item 2). RSS over 300 steps: benchmarks/bench_memory.py."""

from __future__ import annotations

import gc
import sys
import types
import weakref

import paddle
from graph_dicts import nested_graph
from paddle.vision.models import resnet18
from paddle_versions import requires_dump

from paddleviz_widget import trace
from paddleviz_widget.run import main as run_main
from paddleviz_widget.tracer.build import trace_graph
from paddleviz_widget.tracer.capture.session import MAX_RECORDS, STRONG_RECORDS, TraceSession
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph


def held_grad_nodes(session: TraceSession) -> int:
    """GradNodes the session references (not through the user's model), counted by walking
    every object reachable from it: what keeps a backward graph alive."""
    count, seen, stack = 0, {id(session.model)}, [session]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if type(obj).__name__ == "GradNodeBase":
            count += 1
            continue
        if isinstance(obj, (type, types.ModuleType, types.FunctionType, paddle.Tensor)):
            continue  # code, classes and the user's tensors: not what the session holds
        stack.extend(gc.get_referents(obj))
    return count


def _recording(session: TraceSession):
    return session._recorder._rec_ref[0]


def _setup(seed: int = 0):
    paddle.seed(seed)
    model = resnet18(num_classes=10)
    opt = paddle.optimizer.Momentum(0.01, parameters=model.parameters())
    x, label = paddle.randn([2, 3, 32, 32]), paddle.randint(0, 10, [2, 1])
    return model, opt, x, label


def _step(model, opt, x, label):
    y = model(x)
    loss = paddle.nn.functional.cross_entropy(y, label)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return y, loss


def _fully_annotated(graph: dict) -> None:
    assert {"dump", "layers"} <= set(graph["meta"]["annotations"])
    assert all(e["grad"] is not None for e in graph["edges"])
    assert all(n["group"] for n in graph["nodes"])


@requires_dump
def test_a_training_loop_holds_a_bounded_trace_and_annotates_the_current_step():
    model, opt, x, label = _setup()
    held = []
    with trace(model) as session:
        for step in range(10):
            y, loss = _step(model, opt, x, label)
            rec = _recording(session)
            held.append((held_grad_nodes(session), len(rec.owner), len(session.records)))
            assert sum(bool(r.roots) for r in session.records) <= STRONG_RECORDS
            assert len(session.records) <= MAX_RECORDS
            if step in (3, 9):  # the graph inside the loop is this step's, fully annotated
                _fully_annotated(nested_graph(y))
                records, _ = session.sighting({grad_node_of(y).node_ptr()}, ())
                assert records == [session.records[-1]]
    # Nothing grows with the number of steps: the same holdings at step 3 as at step 10.
    assert held[-1] == held[3], held
    nodes = len(walk_backward_graph([grad_node_of(loss)]).nodes)
    assert held[-1][0] <= 2 * nodes and held[-1][1] <= 2 * nodes
    assert held_grad_nodes(session) == 0  # a finished session holds no GradNode
    _fully_annotated(nested_graph(y))  # the last step's y, right after the loop


def test_a_finished_session_lets_go_once_the_tensors_are_gone():
    model, opt, x, label = _setup(1)
    with trace(model) as session:
        for _ in range(3):
            y, loss = _step(model, opt, x, label)
    y_ref, loss_ref = weakref.ref(y), weakref.ref(loss)
    node = grad_node_of(y)
    assert sys.getrefcount(node) == 2  # ours and getrefcount's: the session holds none
    del y, loss, node
    gc.collect()
    assert y_ref() is None and loss_ref() is None
    session.sighting((), ())  # asking prunes what no tensor can be matched to any more
    assert session.records == [] and held_grad_nodes(session) == 0


def test_a_dead_graphs_addresses_reused_by_a_new_graph_get_nothing_from_its_record():
    model, opt, x, label = _setup(2)
    with trace(model) as session:
        y, loss = _step(model, opt, x, label)
    old = session.records[-1].node_ptrs()
    del y, loss
    gc.collect()
    for _ in range(20):  # same model, same shapes: freed GradNode addresses come back
        y = model(x)
        loss = paddle.nn.functional.cross_entropy(y, label)
        ptrs = {n.ptr for n in walk_backward_graph([grad_node_of(loss)]).nodes}
        if ptrs & old:
            break
    assert ptrs & old, "no address was reused; the test proves nothing"
    graph = trace_graph(loss, replay=False).to_dict()
    assert not {"dump", "layers", "vlog"} & set(graph["meta"]["annotations"])


def test_a_live_record_vouches_only_for_nodes_it_can_prove():
    """``kept`` lives, so the first record stays; the loss node it started from is freed and
    a new node takes its address: that record must not claim the new node. Whether the
    allocator hands that address out again depends on the process's heap (deep in the whole
    suite it sometimes does not within 2,000 tries): the scene is played afresh until it does."""
    for _ in range(5):
        graph = _a_freed_address_taken_again()
        if graph is not None:
            break
    assert graph is not None, "no address reused in 5 tries; the test proves nothing"
    assert not {"dump", "vlog"} & set(graph["meta"]["annotations"])


def _a_freed_address_taken_again() -> dict | None:
    """The scene, checked; the new node's graph, or None when no address came back."""
    a = paddle.randn([3])
    a.stop_gradient = False
    with trace() as session:
        kept = a * 2
        kept.sum().backward()
        first = session.records[-1]
        root = int(first.roots[0].node_ptr())
        (a * 3).sum().backward()  # the first record lets go of its nodes
        assert not first.roots and first in session.records
        assert first.vouches_for({grad_node_of(kept).node_ptr()})  # proven through `kept`
        # Same node type: the freed loss node's address comes back. Each one made is kept,
        # else the allocator hands the same just-freed block out again and again.
        made = []
        for _ in range(2000):
            z = kept.sum()
            made.append(z)
            if grad_node_of(z).node_ptr() == root:
                break
        if grad_node_of(z).node_ptr() != root:
            return None
        assert root in first.node_ptrs() and not first.vouches_for({root})
        return trace_graph(z, replay=False).to_dict()


SCRIPT = """
import paddle
from paddleviz_widget import build_graph
from paddleviz_widget.tracer.capture.session import RECENT_SESSIONS
from models import LeNet

model = LeNet()
opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
session = next(RECENT_SESSIONS.newest_first())
counts = []
for step in range(8):
    y = model(paddle.randn([2, 3, 32, 32]))
    y.mean().backward()
    opt.step()
    opt.clear_grad()
    rec = session._recorder._rec_ref[0]
    counts.append((len(session.records), len(rec.owner), len(rec.layers)))
graph = build_graph(y)
assert {"dump", "layers"} <= set(graph["meta"]["annotations"]), graph["meta"]
assert counts[-1] == counts[2], counts
"""


@requires_dump
def test_run_py_keeps_a_script_loop_bounded(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert run_main([str(script)]) == 0


def test_a_forward_without_backward_keeps_its_groups_for_a_tensor_still_held():
    model, _, x, _ = _setup(4)
    with trace(model):
        y = model(x) * 2  # no backward, and made outside any layer
    graph = trace_graph(y, replay=False).to_dict()
    assert "layers" in graph["meta"]["annotations"]
    y_ref = weakref.ref(y)
    del y
    gc.collect()
    assert y_ref() is None  # the anchor is weak
