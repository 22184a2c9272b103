"""`GraphWidget.from_dump(one_dump.dot, which=another)` showed the file's dump and ignored
`which`, silently; `which=3` got pathlib's "expected str, bytes or os.PathLike". Real dumps
written by Paddle (loss.backward(dump_backward_graph_path=...))."""

from __future__ import annotations

import paddle
import pytest
from paddle_versions import requires_dump

from paddleviz_widget import SourceFileError, build_graph_from_dump


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    where = tmp_path_factory.mktemp("dumps") / "dump"
    model = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 1))
    for _ in range(2):
        model(paddle.randn([2, 3])).mean().backward(dump_backward_graph_path=str(where))
    dots = sorted(where.glob("*_backward_graph.dot"))
    assert len(dots) == 2
    return where, dots


@requires_dump
def test_which_against_another_dumps_file_is_refused(dumps):
    where, (first, second) = dumps
    other = second.name.removesuffix("_backward_graph.dot")
    with pytest.raises(SourceFileError, match=rf"which='{other}' picks a dump in a directory"):
        build_graph_from_dump(first, which=other)
    own = first.name.removesuffix("_backward_graph.dot")
    for same in (own, first.name):  # the file's own dump, by prefix or by file name: as asked
        doc = build_graph_from_dump(first, which=same)
        assert doc["meta"]["dump"]["prefix"] == own
    assert build_graph_from_dump(where, which=other)["meta"]["dump"]["prefix"] == other


@requires_dump
def test_which_that_is_not_a_prefix_is_named(dumps):
    with pytest.raises(TypeError, match=r"which= is a dump's timestamp prefix \(a str\), got 3"):
        build_graph_from_dump(dumps[0], which=3)  # type: ignore[arg-type]
