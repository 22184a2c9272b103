"""trace() where the temporary directory's disk is full, or fills up with Paddle's log of the
backward (bug bash round 25; TMPDIR on a 256 kB tmpfs, small_disk.py). Before: the log's
last record, cut off mid-line, was written into the user's stderr ("I1130 15:52:31.019984
18118 accum"), Paddle's dump, empty, was read as whole and the graph claimed "119 edge(s)
carried no gradient in the traced backward", and nothing said the log was cut. Now the
user's stderr holds nothing of it, the graph's notice says the log was cut off and why, and
no edge is said to have carried no gradient. The gradients are the plain backward's."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import paddle
import pytest
from paddle_versions import HAS_DUMP
from small_disk import on_small_disk

from paddleviz_widget.tracer.parse.paddle_dump import parse_backward_dot

HERE = Path(__file__).parent


def test_a_log_cut_by_a_full_tmpdir_is_said_and_nothing_leaks(tmp_path):
    disk = tmp_path / "tmp"
    env = {**os.environ, "TMPDIR": str(disk),
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}  # fmt: skip
    done = on_small_disk("256k", disk, [sys.executable, str(HERE / "tmpdir_full_trace.py")],
                         env=env, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["same_grads"]
    glog = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d")  # a glog record's head, whole or cut
    assert not [line for line in done.stderr.splitlines() if glog.match(line)], done.stderr
    assert got["notice"].startswith("Paddle's log of this backward was cut off: the disk of "
                                    f"the temporary directory it was written to ({disk}) is "
                                    "full")  # fmt: skip
    assert "carried no gradient" not in got["text"]


@pytest.mark.skipif(not HAS_DUMP, reason="Paddle < 3.3 writes no backward dump")
def test_a_dump_cut_off_or_empty_is_not_read_as_whole(tmp_path):
    """Paddle writes its dump to a full disk without a word: empty, or cut at a line."""
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Tanh(), paddle.nn.Linear(4, 2))
    model(paddle.randn([2, 4])).sum().backward(dump_backward_graph_path=str(tmp_path))
    [dot] = tmp_path.glob("*_backward_graph.dot")
    whole = dot.read_text()
    assert parse_backward_dot(whole).warnings == ()
    lines = whole.splitlines(keepends=True)
    last_edge = max(i for i, line in enumerate(lines) if "->" in line)
    for cut in ("", "".join(lines[:last_edge])):  # empty; every line whole but the last edge's
        assert parse_backward_dot(cut).warnings, repr(cut[-80:])
