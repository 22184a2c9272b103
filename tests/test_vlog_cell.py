"""trace() gets Paddle's backward log without GLOG_v on every Paddle: where there is no
``set_vlog_level`` (2.6, 3.0), glog's own FLAGS_v, which every VLOG site reads, is written for
the backward and put back (round 24: 2.6 and 3.0 used to need GLOG_v=6 before ``import
paddle``, and without it gave only the parameters' edges a gradient)."""

from __future__ import annotations

import os

import paddle
import paddle.nn as nn
import pytest
from paddle.distributed.fleet.utils import recompute
from paddle_versions import HAS_VLOG_SWITCH

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph.model import decode
from paddleviz_widget.tracer.capture import vlog
from paddleviz_widget.tracer.capture.stderr_capture import capture_stderr
from paddleviz_widget.tracer.capture.vlog import get_vlog_level, vlog_level
from paddleviz_widget.tracer.parse.log_records import separate_log

_GLOG_V = os.environ.get("GLOG_v")  # noqa: SIM112 - glog's spelling


@pytest.mark.skipif(bool(_GLOG_V), reason="GLOG_v is set: the level is the user's")
def test_every_edge_has_its_gradient_without_glog_v(capfd):
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    x = paddle.randn([5, 4])
    capfd.readouterr()
    with trace(model):
        y = model(x)
        (y * y).sum().backward()
    written = capfd.readouterr()
    assert get_vlog_level() == 0  # put back
    doc = build_graph(y)
    graph = decode(doc)
    nodes = {n.id: n for n in graph.nodes}
    grads = {}  # (sender's op, receiver's op or parameter) -> the gradient's shape
    for edge in graph.edges:
        target = nodes[edge.target]
        receiver = target.param.name if target.param else target.name
        grads[(nodes[edge.source].name, receiver)] = edge.grad and edge.grad.shape
    assert None not in grads.values(), grads
    # The oracle is the model's own tensors: the tanh's output [5, 8] reaches TanhGradNode
    # from the second matmul, and every parameter gets a gradient of its own shape.
    assert grads[("MatmulGradNode", "TanhGradNode")] == (5, 8)
    for name, param in model.named_parameters():
        assert tuple(param.shape) in {s for (_, r), s in grads.items() if r == name}
    assert not doc["meta"].get("notice")
    assert written.err == "" and written.out == ""  # the log was ours, none of it printed


def test_the_level_is_switched_through_glog_without_set_vlog_level(monkeypatch):
    if vlog.flags_v_cell() is None:
        pytest.skip("glog's FLAGS_v is not reachable in this libpaddle")
    if HAS_VLOG_SWITCH:  # 3.3: as 2.6 and 3.0 are, without Paddle's switch
        monkeypatch.delattr(paddle.base.core, "set_vlog_level")
    with capture_stderr():
        before = get_vlog_level()
        with vlog_level(6) as previous:
            inside = get_vlog_level()
        after = get_vlog_level()
    assert (previous, inside, after) == (before, 6, before)


def test_clear_error_when_neither_switch_is_there(monkeypatch):
    monkeypatch.setattr(paddle, "__version__", "3.0.0")
    monkeypatch.setattr(vlog, "flags_v_cell", lambda: None)
    monkeypatch.delenv("GLOG_v", raising=False)
    with pytest.raises(vlog.VlogUnavailableError, match="before `import paddle`"), vlog_level(6):
        pass


# Paddle 3.0.0's own record, copied from a traced recompute's backward (the lists shortened).
_AMP_RECORD = (
    "I1130 13:20:56.029620 17630 imperative.cc:758] AMP operators changed, allow ops: matmul_v2"
    " conv2d matmul mul \nblock ops: reduce_mean reduce_sum softmax \nunsupported fp16 ops: \n"
    "unsupported bf16 ops: \n"
)


def test_paddles_amp_lists_record_is_one_record():
    after = "I1130 13:20:56.029632 17630 tracer.cc:589] set amp_dtype to float32\n"
    records, other = separate_log(_AMP_RECORD + after + "the user's own line\n")
    assert [r.prefix + r.message for r in records] == [_AMP_RECORD, after]
    assert other == "the user's own line\n"


def test_a_traced_recompute_writes_nothing_to_stderr(capfd):
    """A recompute's forward runs again inside the backward, under our VLOG: Paddle 2.6 and 3.0
    log its AMP lists as a four-line record, whose last three lines reached the user's stderr."""
    paddle.seed(0)
    block = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6))
    head = nn.Linear(6, 1)
    model = nn.LayerList([block, head])
    x = paddle.randn([3, 6])
    x.stop_gradient = False
    capfd.readouterr()
    with trace(model):
        y = head(recompute(block, x))
        y.sum().backward()
    written = capfd.readouterr()
    assert written.err == "" and written.out == ""
