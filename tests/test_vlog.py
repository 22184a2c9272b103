"""vlog_level: switches C++ VLOG for a block and restores the exact previous level."""

from __future__ import annotations

from collections.abc import Iterator

import paddle
import pytest
from paddle_versions import requires_vlog_switch

from paddleviz_widget.tracer.capture import vlog
from paddleviz_widget.tracer.capture.stderr_capture import capture_stderr
from paddleviz_widget.tracer.capture.vlog import VlogUnavailableError, get_vlog_level, vlog_level
from paddleviz_widget.tracer.parse.log_parser import parse_backward_log

pytestmark = requires_vlog_switch

CORE = paddle.base.core
# Kept: some tests remove it from core. Absent before 3.3 (the module is skipped there).
SET_LEVEL = getattr(CORE, "set_vlog_level", None)


@pytest.fixture(autouse=True)
def level_zero_around_each_test() -> Iterator[None]:
    with capture_stderr():  # set_vlog_level logs the switch; keep it out of the test output
        SET_LEVEL(0)
    yield
    with capture_stderr():
        SET_LEVEL(0)


def backward_log() -> str:
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    loss = (x * x).sum()
    with capture_stderr() as captured:
        loss.backward()
    return captured.text


@pytest.mark.parametrize("level", [0, 2, 5])
def test_get_vlog_level_reads_what_set_vlog_level_wrote(level):
    with capture_stderr():
        SET_LEVEL(level)
    assert get_vlog_level() == level


@pytest.mark.parametrize("before", [0, 2])
def test_level_is_switched_inside_and_restored_after(before):
    with capture_stderr():
        SET_LEVEL(before)
        with vlog_level(6) as previous:
            inside = get_vlog_level()
        after = get_vlog_level()
    assert (previous, inside, after) == (before, 6, before)


def test_level_is_restored_when_the_body_raises():
    with capture_stderr():
        SET_LEVEL(1)
        with pytest.raises(KeyError), vlog_level(6):
            raise KeyError("x")
        assert get_vlog_level() == 1


def test_nested_levels_unwind_in_order():
    with capture_stderr():
        with vlog_level(6):
            with vlog_level(3):
                assert get_vlog_level() == 3
            assert get_vlog_level() == 6
        assert get_vlog_level() == 0


def test_backward_logs_only_inside_the_block():
    with capture_stderr() as captured, vlog_level(4):
        x = paddle.randn([2, 3])
        x.stop_gradient = False
        (x * x).sum().backward()
    assert parse_backward_log(captured.text).runs
    assert parse_backward_log(backward_log()).runs == ()  # level 0 again: no VLOG at all


@pytest.mark.parametrize("bad", [-1, True, 2.0, "6"])
def test_rejects_a_level_that_is_not_a_non_negative_int(bad):
    with pytest.raises(ValueError), vlog_level(bad):
        pass


def test_clear_error_without_a_runtime_switch(monkeypatch):
    monkeypatch.delattr(CORE, "set_vlog_level")
    monkeypatch.setattr(vlog, "flags_v_cell", lambda: None)  # nor glog's FLAGS_v (test_vlog_cell)
    with pytest.raises(VlogUnavailableError) as info, vlog_level(6):
        pass
    assert "paddlepaddle>=3.3" in str(info.value) and "GLOG_v=6" in str(info.value)


def test_old_paddle_version_gets_the_same_error(monkeypatch):
    monkeypatch.setattr(paddle, "__version__", "3.0.0")
    monkeypatch.setattr(vlog, "flags_v_cell", lambda: None)
    with pytest.raises(VlogUnavailableError, match="before `import paddle`"), vlog_level(6):
        pass


def test_without_a_switch_a_high_enough_glog_v_level_is_used_as_is(monkeypatch):
    with capture_stderr():
        SET_LEVEL(6)  # stands in for GLOG_v=6 set before import
        monkeypatch.delattr(CORE, "set_vlog_level")
        with vlog_level(4) as previous:
            assert get_vlog_level() == 6
        assert previous == 6 and get_vlog_level() == 6


def test_level_falls_back_to_glog_v_when_flags_v_is_unreachable(monkeypatch):
    monkeypatch.setattr(vlog, "_FLAGS_V_SYMBOL", "no_such_symbol")
    monkeypatch.setattr(vlog, "_flags_v", None)
    monkeypatch.setenv("GLOG_v", "3")
    assert get_vlog_level() == 3
    monkeypatch.delenv("GLOG_v")
    assert get_vlog_level() == 0
