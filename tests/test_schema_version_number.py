"""A document whose schema_version is the number 2.3 (a hand-edited file, or one another tool
wrote) said "unknown graph schema_version 2.3: this paddleviz_widget reads '2.3', ...", a
contradiction to the reader; it now says the number is not the string and how to write it."""

from __future__ import annotations

import json

import paddle
import pytest

from paddleviz_widget import GraphDocumentError, GraphWidget, build_graph


@pytest.mark.parametrize("number", [2.3, 2.0])
def test_a_number_for_the_version_is_said_so(tmp_path, number):
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    doc = {**build_graph((x * x).sum()), "schema_version": number}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphDocumentError) as info:
        GraphWidget.from_graph(path)
    message = str(info.value)
    assert info.value.field == "schema_version"
    assert f"is the number {number}, not the string '{number}'" in message
    assert f'"schema_version": "{number}"' in message
    assert "g.json" in message and "unknown" not in message
