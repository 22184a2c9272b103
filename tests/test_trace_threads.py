"""trace() in threads, each script in its own process. What a trace switches on is process-wide
(Paddle's backward entry points, VLOG, fd 2): two traces whose blocks overlap in two threads end
in any order, and the first to end put back the entry points the second had wrapped. Before,
``paddle.Tensor.backward`` then stayed patched by a finished trace after both ended (the user's
process changed for good), and the second thread's graph came out bare with a notice telling
the user to wrap the backward in trace(), which they had. Now the second trace() is refused
with the package's message; traces one after the other in two threads both work."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent

COMMON = """
import threading, time
import paddleviz_widget
import paddle
from paddleviz_widget import build_graph, trace

originals = (paddle.Tensor.backward, paddle.autograd.backward, paddle.grad)

def restored():
    return originals == (paddle.Tensor.backward, paddle.autograd.backward, paddle.grad)

def traced_graph():
    m = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2))
    with trace(m):
        y = m(paddle.randn([2, 4]))
        y.sum().backward()
    return build_graph(y)["meta"]["sources"]["edges"]

print("MAIN", traced_graph())  # where each edge's gradient came from, traced in the main thread
"""

OVERLAPPING = """
entered, b_done = threading.Event(), threading.Event()

def a():
    with trace(paddle.nn.Linear(4, 2)):
        entered.set()
        b_done.wait(60)  # b enters while a is active; a's block ends first

def b():
    entered.wait()
    try:
        with trace(paddle.nn.Linear(4, 2)):
            b_done.set()
            time.sleep(0.3)
        print("B ENTERED")
    except RuntimeError as error:
        print("REFUSED", error)
    finally:
        b_done.set()

threads = [threading.Thread(target=a, name="trainer-a"), threading.Thread(target=b)]
[t.start() for t in threads]
[t.join() for t in threads]
print("RESTORED", restored())
print("AFTER", traced_graph())
"""

ONE_AFTER_THE_OTHER = """
said = []
for _ in range(2):
    t = threading.Thread(target=lambda: said.append(traced_graph()))
    t.start()
    t.join()
print("GRAPHS", said)
print("RESTORED", restored())
"""


def _run(tmp_path: Path, body: str) -> str:
    script = tmp_path / "threads.py"
    script.write_text(textwrap.dedent(COMMON) + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stdout


def _said(output: str, key: str) -> str:
    return output.split(f"{key} ", 1)[1].splitlines()[0]


def test_a_trace_overlapping_one_in_another_thread_is_refused_and_nothing_stays_patched(tmp_path):
    said = _run(tmp_path, OVERLAPPING)
    assert "B ENTERED" not in said
    assert "REFUSED trace() is already active in thread 'trainer-a'" in said
    assert "one thread traces at a time" in said
    assert "RESTORED True" in said
    assert _said(said, "AFTER") == _said(said, "MAIN")  # a later trace captures as before


def test_traces_one_after_the_other_in_two_threads_both_capture(tmp_path):
    said = _run(tmp_path, ONE_AFTER_THE_OTHER)
    assert _said(said, "GRAPHS") == repr([_said(said, "MAIN")] * 2), said
    assert "RESTORED True" in said
