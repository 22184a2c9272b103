"""Which Paddle the suite runs on, and marks for tests that need what only some versions have.

Each mark names the missing API in its reason, so a skipped test says why (``pytest -rs``).
Capabilities are probed, not inferred from the version string, except where a call would
have side effects.
"""

from __future__ import annotations

import importlib.util
import inspect
import re

import paddle
import pytest

from paddleviz_widget.tracer.capture.backward_capture import accepts_dump_kwarg
from paddleviz_widget.tracer.capture.vlog import flags_v_cell, runtime_switch_available

_match = re.match(r"(\d+)\.(\d+)", paddle.__version__)
PADDLE_VERSION = (int(_match[1]), int(_match[2])) if _match else (0, 0)

HAS_DUMP = accepts_dump_kwarg(paddle.Tensor.backward)
HAS_VLOG_SWITCH = runtime_switch_available()
# trace() logs the backward without GLOG_v: Paddle's switch (3.3) or glog's FLAGS_v (2.6, 3.0)
LOGS_AT_RUN_TIME = HAS_VLOG_SWITCH or flags_v_cell() is not None
HAS_PADDLEFORMERS = importlib.util.find_spec("paddleformers") is not None

requires_dump = pytest.mark.skipif(
    not HAS_DUMP,
    reason=f"paddle {paddle.__version__}: backward(dump_backward_graph_path=...) needs >= 3.3",
)
requires_vlog_switch = pytest.mark.skipif(
    not HAS_VLOG_SWITCH,
    reason=f"paddle {paddle.__version__}: set_vlog_level at run time needs >= 3.3",
)
# trace()'s full account (dump + VLOG switched on around backward) and the oracles built on it.
requires_paddle_33 = pytest.mark.skipif(
    not (HAS_DUMP and HAS_VLOG_SWITCH),
    reason=f"paddle {paddle.__version__}: needs >= 3.3 (runtime VLOG switch, backward dump)",
)
requires_paddleformers = pytest.mark.skipif(
    not HAS_PADDLEFORMERS,
    reason="paddleformers is not installed (1.2.0 imports on paddle >= 3.3 only, not 3.0 or 2.6)",
)
requires_hook_kwargs = pytest.mark.skipif(
    "with_kwargs" not in inspect.signature(paddle.nn.Layer.register_forward_pre_hook).parameters,
    reason=f"paddle {paddle.__version__}: register_forward_pre_hook(with_kwargs=) needs >= 3.0",
)
# Probing would run a recompute; 2.6 raises "Recompute with RNG perserve is not support current
# device: cpu" for use_reentrant=False.
requires_cpu_recompute = pytest.mark.skipif(
    PADDLE_VERSION[:2] == (2, 6) and not paddle.is_compiled_with_cuda(),
    reason=f"paddle {paddle.__version__}: recompute(use_reentrant=False) refuses the CPU",
)
_node_probe = paddle.ones([1])
_node_probe.stop_gradient = False
HAS_POST_HOOKS = hasattr((_node_probe * 2.0).grad_fn, "_register_post_hook")
requires_post_hooks = pytest.mark.skipif(
    not HAS_POST_HOOKS,
    reason=f"paddle {paddle.__version__}: GradNode post hooks (trace(stats=True)) need >= 3.0",
)


def our_lines(stderr: str) -> list[str]:
    """The package's own stderr lines, less 2.6's once-only note that a watched run's captures
    have no gradient statistics (stats_watch.NO_CAPTURE_STATS: right there, said once)."""
    return [
        line
        for line in stderr.splitlines()
        if line.startswith("paddleviz_widget:")
        and (HAS_POST_HOOKS or "no GradNode post hooks" not in line)
    ]
