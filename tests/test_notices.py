"""No silent degradation (issue 11, item 3): a log or dump that is only partly understood gives
the graph a one-line notice, and a bug inside a parser is raised, not turned into nothing."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_paddle_33

from paddleviz_widget import build_graph, trace
from paddleviz_widget.tracer.capture import backward_capture
from paddleviz_widget.tracer.capture.backward_capture import CapturedBackward, run_captured
from paddleviz_widget.tracer.merge.annotate import Annotations
from paddleviz_widget.tracer.merge.log_annotations import note_mismatches
from paddleviz_widget.tracer.parse import log_parser
from paddleviz_widget.tracer.parse.log_parser import parse_backward_log
from paddleviz_widget.tracer.parse.paddle_dump import parse_backward_dot

LOGS = Path(__file__).parent / "fixtures" / "logs"
PARTLY = "only partly understood"


def next_ptrs(name: str) -> dict[int, list[int | None]]:
    nodes = json.loads((LOGS / f"{name}.next.json").read_text())
    return {int(n["ptr"], 16): [t and int(t, 16) for t in n["next"]] for n in nodes}


# --- the parsers say what they did not understand ------------------------------------------


@pytest.mark.parametrize("name", ["lenet", "paddle-3.0.0/lenet", "paddle-2.6.2/lenet"])
def test_a_truncated_log_is_one_warning_line(name):
    text = (LOGS / f"{name}.log").read_text()
    log = parse_backward_log(text[: len(text) * 2 // 3])
    (line,) = log.warnings
    assert PARTLY in line and "\n" not in line
    assert log.runs, "what was read before the cut is kept"


def test_an_unknown_format_log_is_one_warning_line():
    # 3.3.1's log with its run and edge messages reworded, as a future Paddle might.
    text = (LOGS / "mlp.log").read_text().replace("begin run", "starts").replace("Found", "Saw")
    log = parse_backward_log(text)
    assert log.runs == ()
    (line,) = log.warnings
    assert "no GradNode run found" in line and "Paddle 2.6, 3.0 or 3.3" in line


def test_a_dump_with_undeclared_nodes_and_odd_labels_says_so():
    text = (LOGS / "mlp.dot").read_text()
    assert parse_backward_dot(text).warnings == ()
    first, second = [line for line in text.splitlines() if "->" in line][:2]
    broken = text.replace(first, first.replace("node_", "node_9999", 1), 1)
    broken = broken.replace(second, second.replace("float32[", "float32<"), 1)
    (line,) = parse_backward_dot(broken).warnings
    assert "edges naming an undeclared node: 1" in line and "edge labels not read: 1" in line


def test_a_dump_whose_nodes_do_not_match_the_graph_gives_a_notice_line():
    dump = parse_backward_dot((LOGS / "two_outputs.dot").read_text())
    nexts = next_ptrs("two_outputs")
    ann = Annotations()
    note_mismatches(ann, None, dump, nexts)
    assert ann.notes == []
    # The same dump against a graph whose matmul node lost an edge: that dump edge is unmatched.
    src = next(p for p, t in nexts.items() if len(t) == 2 and None not in t)
    nexts[src] = [nexts[src][0], None]
    note_mismatches(ann, None, dump, nexts)
    assert ann.notes == [
        "1 edge(s) in Paddle's backward dump do not match this graph's next_functions; "
        "the dump's gradients are not used for them."
    ]


def test_notes_name_an_unknown_paddle_version(monkeypatch):
    text = (LOGS / "mlp.log").read_text()
    captured = CapturedBackward(log=parse_backward_log(text[: len(text) // 2]))
    monkeypatch.setattr(backward_capture, "paddle_version_text", lambda: "3.3.1")
    (known,) = captured.notes
    monkeypatch.setattr(backward_capture, "paddle_version_text", lambda: "3.1.0")
    (unknown,) = captured.notes
    assert (
        unknown
        == "paddle 3.1.0 is not a version whose log format is known (2.6, 3.0, 3.3): " + known
    )
    assert CapturedBackward(log=parse_backward_log(text)).notes == []


# --- bugs are raised ----------------------------------------------------------------------


def _broken(*_args, **_kwargs):
    raise ZeroDivisionError("a bug in the parser")


def test_a_bug_inside_the_log_parser_is_raised(monkeypatch):
    monkeypatch.setattr(log_parser._Parser, "_dump", _broken)
    with pytest.raises(ZeroDivisionError, match="a bug in the parser"):
        parse_backward_log((LOGS / "mlp.log").read_text())


def test_a_bug_inside_the_parser_reaches_the_caller_of_a_captured_backward(monkeypatch):
    monkeypatch.setattr(log_parser._Parser, "finish", _broken)
    # As if VLOG were on on every Paddle (< 3.3 cannot switch it): the log is parsed.
    monkeypatch.setattr(backward_capture, "vlog_level", lambda level: contextlib.nullcontext(0))
    ran = []
    with pytest.raises(ZeroDivisionError):
        run_captured(lambda extra: ran.append(extra), function=None)
    assert ran == [{}], "the backward itself ran; only the parser's error came after it"


def test_a_bug_inside_the_dump_parser_is_raised(monkeypatch):
    import paddleviz_widget.tracer.parse.paddle_dump as paddle_dump

    monkeypatch.setattr(paddle_dump, "parse_grad_label", _broken)
    with pytest.raises(ZeroDivisionError):
        parse_backward_dot((LOGS / "mlp.dot").read_text())


# --- and the graph carries the line ---------------------------------------------------------


@requires_paddle_33
def test_a_truncated_traced_log_reaches_the_graphs_notices(monkeypatch):
    """trace() on a real backward whose captured log is cut: the graph still has every edge's
    gradient (from the dump) and says in a line that the log was only partly read."""
    parse = backward_capture.parse_glog_records

    def cut(records):
        records = list(records)
        return parse(records[: len(records) // 2])

    monkeypatch.setattr(backward_capture, "parse_glog_records", cut)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    with trace(model, slots=True):
        y = model(paddle.randn([2, 4])).mean()
        y.backward()
    meta = build_graph(y)["meta"]
    lines = meta.get("notices", [meta.get("notice")])
    assert sum(PARTLY in str(line) for line in lines) == 1, lines
    assert "dump" in meta["annotations"]
