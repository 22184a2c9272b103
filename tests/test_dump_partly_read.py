"""A Paddle dump directory or call-stack log that is only partly understood gets a notice line
saying what was left out; one that cannot be read says which file and which line (an edge
naming an undeclared node is said to be exactly that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddleviz_widget import SourceFileError
from paddleviz_widget.sources import load_dump_graph
from paddleviz_widget.tracer.parse.call_sites import (
    parse_call_stack_entries,
    parse_call_stack_log,
)

DOT = """digraph G {
node_1[label="MatmulGradNode\\nPtr: 0x10"]
node_2[label="GradNodeAccumulation\\nPtr: 0x20"]
node_1->node_2[label="Place(cpu)\\nfloat32[4, 4]"]
}
"""


def dump_dir(tmp_path: Path, dot: str, log: str | None = None) -> Path:
    (tmp_path / "run_backward_graph.dot").write_text(dot)
    if log is not None:
        (tmp_path / "run_call_stack.log").write_text(log)
    return tmp_path


def test_a_whole_dump_has_no_notice(tmp_path: Path) -> None:
    graph = load_dump_graph(dump_dir(tmp_path, DOT))
    assert graph.edges[0].grad is not None and graph.edges[0].grad.shape == (4, 4)
    assert "notice" not in graph.meta


@pytest.mark.parametrize("dim", ["9" * 40, "9" * 5000, "4x"])
def test_a_shape_it_cannot_read_is_left_out_with_a_notice(tmp_path: Path, dim: str) -> None:
    graph = load_dump_graph(dump_dir(tmp_path, DOT.replace("[4, 4]", f"[4, {dim}]")))
    grad = graph.edges[0].grad
    assert grad is not None and grad.shape is None and grad.dtype == "float32"
    assert "gradient shapes not read: 1" in graph.meta["notice"]
    assert "only partly understood" in graph.meta["notice"]


def test_an_edge_to_an_undeclared_node_names_the_node_and_line(tmp_path: Path) -> None:
    dot = DOT.replace("node_1->node_2", "node_1->node_9")
    with pytest.raises(SourceFileError) as caught:
        load_dump_graph(dump_dir(tmp_path, dot))
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "run_backward_graph.dot") + ": ")
    assert "line 4 is an edge to or from node_9, but no line declares node_9" in message
    assert "not in the form" not in message


LOG = """GradNodeBase MatmulGradNode ptr : 0x10 call stack:
  File "/home/me/net.py", line {line}, in forward
    return x @ w
"""


def test_a_5000_digit_line_number_is_left_out_with_a_notice(tmp_path: Path) -> None:
    text = LOG.format(line="9" * 5000)
    assert parse_call_stack_log(text) == {}  # never raises: the frame is not read
    unread: list[str] = []
    (entry,) = parse_call_stack_entries(text, unread)
    assert entry.frames == () and len(unread) == 1
    graph = load_dump_graph(dump_dir(tmp_path, DOT, text))
    assert graph.nodes[0].call_site is None
    assert (
        "run_call_stack.log was only partly understood: 1 line(s) not read"
        in (graph.meta["notice"])
    )


def test_a_header_with_a_40_digit_ptr_keeps_its_frames_from_the_previous_node() -> None:
    text = LOG.format(line=3) + LOG.format(line=7).replace("0x10", "0x" + "f" * 40)
    unread: list[str] = []
    entries = parse_call_stack_entries(text, unread)
    assert [len(e.frames) for e in entries] == [1] and len(unread) == 1
    assert parse_call_stack_log(text)[0x10].line == 3
