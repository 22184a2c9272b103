"""GraphWidget(y) in a real ipykernel (jupyter_client, no browser), widget after widget: the
constructor's wall and CPU time, the garbage collector's time inside it (``gc.callbacks``; for a
constructor that pauses the collector, the young pass right after it too), and when the client
got the graph's message (execute -> the comm message with the big buffers) and the cell ended.

    PYTHONPATH=<tree> python benchmarks/kernel_widget_gc.py [--model llama-100k] [--widgets 6]

Alternate two trees process by process to compare them (RESULTS.md, issue 22 round 10).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

SETUP = """import sys, time, gc
sys.path.insert(0, {bench!r})
import models
from paddleviz_widget import GraphWidget, trace
model, x = {{**models.MODELS, **models.HUGE}}[{name!r}]()
with trace(model):
    y = model(x)
    y.sum().backward()
_gc = [0.0, 0.0, 0]
def _cb(phase, info):
    if phase == "start":
        _gc[1] = time.perf_counter()
    else:
        _gc[0] += time.perf_counter() - _gc[1]
        _gc[2] += info["generation"] == 2
gc.callbacks.append(_cb)
"""
CELL = (
    "_gc[0] = 0.0; _gc[2] = 0; _t = time.perf_counter(); _c = time.process_time(); "
    "w{i} = GraphWidget(y); _w, _p, _g, _f = time.perf_counter() - _t, time.process_time() - _c, "
    "_gc[0], _gc[2]; print(f'{{_w:.3f}} {{_p:.3f}} {{_g:.3f}} {{_f}}')"
)
BIG = 1_000_000  # bytes of buffers: the graph's message


def run(kc: Any, code: str, timeout: float = 900) -> tuple[str, float | None, float]:
    """Output, seconds until the graph's message arrived (None if none did), until idle."""
    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    out, arrived = [], None
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind in ("comm_open", "comm_msg") and sum(map(len, msg.get("buffers", []))) > BIG:
            arrived = arrived or time.perf_counter() - t0
        elif kind == "stream":
            out.append(msg["content"]["text"])
        elif kind == "error":
            out.append("\n".join(msg["content"]["traceback"]))
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out).strip(), arrived, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-100k")
    parser.add_argument("--widgets", type=int, default=6)
    args = parser.parse_args()
    bench = str(Path(__file__).resolve().parent)
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        print(run(kc, SETUP.format(bench=bench, name=args.model))[0])
        print("widget: wall s, CPU s, GC s inside (full passes) | graph at client s | cell s")
        for i in range(args.widgets):
            text, arrived, total = run(kc, CELL.format(i=i))
            wall, cpu, gcs, full = text.split()[-4:] if text else ("?",) * 4
            got = f"{arrived:.3f}" if arrived is not None else "-"
            print(f"{i}: {wall} {cpu} {gcs} ({full}) | {got} | {total:.3f}", flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
