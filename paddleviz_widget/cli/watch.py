"""``python -m paddleviz_widget train.py ARGS --run-dir runs/exp1 [--every N]``: run a training
script as ``python train.py ARGS`` would, inside trace(stats=True, every=N, run_dir=...), so that
the whole run is logged (README "Watching a training run"); under paddle.distributed.launch
(`$(python -m paddleviz_widget --script-path)` as the launcher's script) each rank logs to
RUN_DIR/rank-NNNNN (README "Multi-rank runs"). The model is the nn.Layer whose
parameters the script's first backward reaches. The script's output and exit status are its own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..runs.errors import RunLogError
from ..runs.format import rank_dir
from ..runs.watch import DEFAULT_EVERY
from ..stderr_line import say
from .capture import no_backward_call
from .script_runner import script_ending

PROG = "python -m paddleviz_widget"


# Its own usage: argparse's would read "--run-dir RUN_DIR [-h] --run-dir RUN_DIR ...", no script.
USAGE = f"""\
{PROG} --run-dir RUN_DIR [--every N] [--ranks all|R|R,R] SCRIPT.py [ARGS ...]
       {PROG} SCRIPT.py [ARGS ...] --run-dir RUN_DIR [--every N] [--ranks all|R|R,R]"""

DESCRIPTION = """\
Run a PaddlePaddle script as `python SCRIPT.py ARGS` would, inside
paddleviz_widget.trace(stats=True, every=N, run_dir=RUN_DIR), so that the whole run is
logged: every step's per-parameter gradient summary, the anomalies found, and full captures
(the backward graph) of step 0, every N-th step and the step after an anomaly. Read it with
paddleviz_widget.open_run(RUN_DIR), GraphWidget.from_run(RUN_DIR) or
`python -m paddleviz_widget view RUN_DIR -o run.html`. The model is the nn.Layer whose
parameters the script's first backward reaches; the script's output and exit status are its own.

Our options go before SCRIPT.py (then every later argument is the script's, its own --run-dir
included), or at the very end. Under paddle.distributed.launch each rank logs to
RUN_DIR/rank-NNNNN."""

_TAKES_VALUE = ("-o", "--output", "--step", "--run-dir", "--every", "--ranks")
_TRAILING = ("--run-dir", "--every", "--ranks")


def _is_run_dir(arg: str) -> bool:
    return arg == "--run-dir" or arg.startswith("--run-dir=")


def _leading(argv: list[str]) -> int:
    """How many items of ``argv`` are our options before SCRIPT.py."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 if "=" in argv[i] or argv[i] not in _TAKES_VALUE else 2
    return min(i, len(argv))


def wants_run_dir(argv: list[str]) -> bool:
    """--run-dir among our options: before SCRIPT.py, or at the very end when no option of
    ours came before it (a script's own --run-dir, among its arguments, is the script's)."""
    lead = argv[: _leading(argv)]
    if any(_is_run_dir(a) for a in lead):
        return True
    if any(a in ("-o", "--output") or a.startswith("--output=") for a in lead):
        return False  # the graph mode, its options before the script: the rest is the script's
    return any(_is_run_dir(a) for a in _split(argv)[0])


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """Our options (before SCRIPT.py, or --run-dir/--every/--ranks at the very end when
    --run-dir did not come before it) and the script's command line."""
    n = _leading(argv)
    ours, rest = list(argv[:n]), list(argv[n:])
    if any(_is_run_dir(a) for a in ours):
        return ours, rest  # the script's arguments are all its own (its --run-dir included)
    while True:  # "--every 5" or "--every=5", as before SCRIPT.py
        if len(rest) >= 3 and rest[-2] in _TRAILING:
            ours, rest = rest[-2:] + ours, rest[:-2]
        elif len(rest) >= 2 and rest[-1].startswith(tuple(f"{t}=" for t in _TRAILING)):
            ours, rest = rest[-1:] + ours, rest[:-1]
        else:
            return ours, rest


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, usage=USAGE, description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--run-dir", required=True, metavar="RUN_DIR",
                        help="a new directory for the run log (open_run, view)")  # fmt: skip
    parser.add_argument("--every", type=int, default=DEFAULT_EVERY, metavar="N",
                        help=f"full capture every N steps (default {DEFAULT_EVERY})")  # fmt: skip
    parser.add_argument(
        "--ranks", default="all", type=_ranks, metavar="all|R|R,R",
        help="under paddle.distributed.launch: the ranks that record (default all; e.g. 0, or "
        "0,3); each writes RUN_DIR/rank-NNNNN",
    )  # fmt: skip
    ours, rest = _split(argv)
    options = parser.parse_args(ours)
    if not rest:
        parser.error("pass the script to run: --run-dir runs/exp1 train.py [ARGS]")
    if options.every < 1:
        parser.error(f"--every is a number of steps >= 1, got {options.every}")
    script, args = Path(rest[0]), rest[1:]
    if not script.is_file():
        parser.error(f"no such script: {script} (pass the path of a .py file)")
    from ..tracer.capture.session import TraceSession
    from ..tracer.capture.stats_watch import post_hooks_available, say_no_capture_stats
    from ..tracer.capture.watched import discovering_watch

    # Statistics where Paddle has the hooks for them (>= 3.0; 2.6: the summary and the graphs,
    # said once). No VLOG: its cost, on every capture.
    session = TraceSession(None, stats=post_hooks_available(), slots=False)
    try:  # the run dir and the launcher's environment checked before the script runs
        session.watch = watching = discovering_watch(options.run_dir, options.every, options.ranks)
        session.inert = not watching.recorded
        if watching.recorded and not session.stats:
            say_no_capture_stats()
        with session:
            status, watching.ended_by = script_ending(script, args)  # the run log says it
    except RunLogError as error:  # e.g. the directory already holds a run log
        say(f"paddleviz_widget: {error}")
        return 1
    watch = session.watch
    if watch is not None and watch.step and not watch.forked_away:  # (a fork's child: none)
        where = rank_dir(options.run_dir, watch.job.rank) if watch.job.launched else options.run_dir
        say(f"paddleviz_widget: {_logged(Path(where))}")
    elif watch is not None and watching.recorded and not watch.forked_away and status == 0:
        # No step, no log: said, or open_run(RUN_DIR) is the first to tell ("does not exist").
        said = no_backward_call(f"no run log in {options.run_dir}")
        say(f"paddleviz_widget: {said}")
    return status


def _logged(where: Path) -> str:
    """The closing line, from the log read back: the steps a reader will see. The watch's own
    count was one under when the log failed mid-step (a full disk): that step's tail line was
    written, its count not."""
    from ..runs.reader import open_run

    try:
        steps = len(open_run(where).steps)
    except RunLogError as error:
        return f"the run log in {where} cannot be read back: {error}"
    return f"run log of {steps} steps in {where}"


def _ranks(text: str) -> str | list[int]:
    if text == "all":
        return text
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--ranks takes all, a rank (0) or ranks with commas (0,3), got {text!r}"
        ) from None
