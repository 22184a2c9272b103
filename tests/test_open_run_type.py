"""open_run(5) (a step number or a run id where the directory goes) got pathlib's "expected
str, bytes or os.PathLike object, not int"; it now names the argument and what it takes, as
GraphWidget.from_run does (test_bad_input.py)."""

from __future__ import annotations

import pytest

from paddleviz_widget import open_run


@pytest.mark.parametrize("bad", [5, None, ["runs/exp1"]], ids=["int", "None", "list"])
def test_open_run_of_what_is_no_path_says_what_to_pass(bad):
    with pytest.raises(
        TypeError, match=f"open_run takes a run log's directory .*not {type(bad).__name__}"
    ):
        open_run(bad)
