"""Unicode digits that str.isdigit() accepts and int() refuses ("²", "³", "¹"), where the
package reads numbers out of text: damaged input gets the package's own answer, never a bare
ValueError (a hypothesis run of test_hostile_documents_properties found the dump's case)."""

from __future__ import annotations

import json

import pytest

from paddleviz_widget.errors import PaddlevizError
from paddleviz_widget.runs import format as fmt
from paddleviz_widget.runs import open_run
from paddleviz_widget.sources.paddle_dump_dir import load_dump_graph

DUMP = (
    'digraph G {\nnode_1[label="MatmulGradNode\\nPtr: 0x10"]\n'
    'node_2[label="GradNodeAccumulation\\nPtr: 0x20"]\n'
    'node_3[label="AddGradNode\\nPtr: 0x30"]\n'
    'node_3->node_1[label="Place(cpu)\\nfloat32[²4, 4]"]\n'
    'node_1->node_2[label="Place(cpu)\\nfloat32[4, 8]"]\n}\n'
)


def test_a_dump_shape_with_a_superscript_is_no_shape(tmp_path):
    (tmp_path / "run_backward_graph.dot").write_text(DUMP)
    graph = load_dump_graph(tmp_path)
    shapes = sorted(str(e.grad.shape) for e in graph.edges if e.grad is not None)
    assert shapes == ["(4, 8)", "None"]  # the readable label read, the other's shape left out


def test_capture_file_names_with_superscripts_are_not_captures():
    assert fmt.capture_step("capture-00000000².json.zst") is None
    assert fmt.capture_step("capture-000000002.json.zst") == 2


def test_a_run_schema_with_a_superscript_is_refused_by_name(tmp_path):
    run = tmp_path / "run"
    (run / fmt.STEPS).mkdir(parents=True)
    (run / fmt.META).write_text(json.dumps({"run_schema": "².0", "status": "running"}))
    with pytest.raises(PaddlevizError, match="run_schema ².0"):
        open_run(run)
