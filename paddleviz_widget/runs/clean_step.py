"""A watched step in one compiled call (step_ir.py's watch_step): the gradients read, their
float32 rows put in the run log writer's buffers and, for a clean step, the anomaly rules'
quiet_step, where the summary (compiled_read.py), the writer (log_writer.py) and the rules
(anomalies.py) would make three calls and copy the rows between them. Right after Paddle's
step every distinct call costs microseconds (benchmarks/RESULTS.md), so a clean step where
no rule can fire costs the gradients' ``p.grad`` / ``data_ptr()`` / dtype, that call, its
tail line and its write. Any other step gets the summary of the same call back and goes the
usual way (write_step, check): the same numbers, rows, lines and anomalies either way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .anomalies import AnomalyFinder
from .grad_kernel import kernel
from .log_writer import RunLogWriter
from .summary import GradSummary

SETTLED = 1 << 32  # watch_step's bit: quiet_step settled the step


class CleanStep:
    """``run(step, loss)``: True (the step is recorded: clean, nothing fired), the summary
    tuple of GradSummary.read_step for the usual path, or None (read it the usual way)."""

    def __init__(self, summary: GradSummary, writer: RunLogWriter, finder: AnomalyFinder):
        self._summary = summary
        self._writer = writer
        self._finder = finder
        self._params = summary.params
        self._call: Any = None  # watch_step once compiled (a helper thread: kernel())
        self._frame = np.zeros(19, np.int64)
        self._frame_at = self._frame.ctypes.data
        self._read: Any = None  # the summary's CompiledRead, once there

    def _ready(self) -> bool:
        read = self._summary.compiled_read()
        if read is None:
            return False
        call = kernel("watch_step", wait=False)
        if call is None:
            return False
        frame = self._frame
        frame[:7] = read.frame_head()
        frame[7:10] = self._writer.rows()
        frame[18] = read.stop
        quiet = self._finder.quiet_frame()
        if quiet is not None:
            frame[11:16] = quiet
            factor, ratio, fraction = self._finder.quiet_factors()
            frame[16:18].view(np.float64)[:] = factor, ratio
            frame[10:11].view(np.float64)[:] = fraction
        self._read, self._call = read, call
        return True

    def run(self, step: int, loss: Any) -> Any:
        if self._call is None and not self._ready():
            return None
        read, finder = self._read, self._finder
        bound, row = finder.quiet_bounds()
        grads = [p.grad for p in self._params]  # referenced until they are read
        absent = read.addresses(grads)
        if absent is None:
            return None
        loss_addr, loss_kind, value = read.loss_address(loss)
        if absent or (value is not None and not math.isfinite(value)):  # NaN/Inf loss given
            row = 0
        read.read_halves()
        writer = self._writer
        got = self._call(self._frame_at, loss_addr, loss_kind, writer.next_row(), bound, row)
        value = read.loss_read(loss_kind, value)
        if got == SETTLED:
            writer.write_clean(step, value)
            finder.quiet_settled()
            return True
        return read.result(got & (SETTLED - 1), absent, value)
