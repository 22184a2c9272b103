"""``python -m paddleviz_widget [-o FILE] [--step N | --all] SCRIPT.py [ARGS...]``, or with
the options at the end: ``python -m paddleviz_widget SCRIPT.py [ARGS...] -o FILE``.

Runs a training script as ``python SCRIPT.py ARGS`` would, inside ``trace()``, and writes the
backward graph of one of its backward calls (or of each) to a file whose suffix picks the
format. The script's own output, files and results are its own: this adds one line to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..digits import is_int_text
from ..export.errors import StaticPictureUnavailable
from ..export.picture import NO_DOT, dot_found
from ..export.save import FORMATS, check_target, refuse_replacing, said
from ..stderr_line import say
from .capture import WHAT_COUNTS, BackwardCalls, CliError, GraphCollector
from .script_runner import run_script

PROG = "python -m paddleviz_widget"

DESCRIPTION = f"""\
Run a PaddlePaddle script as `python SCRIPT.py ARGS` would, inside paddleviz_widget.trace(),
and save the backward graph of one of its backward calls (the last one by default), fully
annotated. Backward calls are:
  {WHAT_COUNTS},
each counted once, in the order they return (a backward run inside another, such as
paddle.grad in a PyLayer's backward, is part of it).

The suffix of -o picks what is written:
{chr(10).join(f"  {suffix:6} {what}" for suffix, what in FORMATS.items())}
(the view: the one the explorer opens on).

Under paddle.distributed.launch ($({PROG} --script-path) as the launcher's script),
each rank writes its own file: -o graph.html gives graph.rank-00000.html, graph.rank-00001.html...

An existing -o file is not replaced: the command stops before the script runs and says so,
unless --force is given (with --all: any existing FILE_NNN.suffix counts).

Options come before SCRIPT.py, or at the very end, after the script's arguments, when -o
is not given before it: `train.py --epochs 1 -o graph.html`. A script that takes its own -o
needs them before SCRIPT.py.
If the script fails (an exception, or sys.exit with a non-zero status), its traceback is
printed as Python prints it, the exit status is the script's, and no file is written;
sys.exit(0) is success. A script that makes no backward call is an error (status 1), and so
are bad arguments (status 2, before the script runs).

With --run-dir RUN_DIR instead of -o, the whole run is logged (--every N, --ranks R):
`{PROG} --run-dir RUN_DIR --help` says how.
"""

EPILOG = f"""\
examples:
  {PROG} -o graph.html train.py --epochs 1
  {PROG} -o graph.svg --step 2 train.py     # the second backward call
  {PROG} -o graph.json --all train.py       # graph_001.json, graph_002.json, ...
  {PROG} train.py --run-dir runs/exp1       # log the whole run (--every N: full captures)
  {PROG} view runs/exp1 -o run.html         # a run log's explorer (see view --help)
  python -m paddle.distributed.launch --nproc_per_node 4 $({PROG} --script-path) \\
      train.py --run-dir runs/exp1           # one log per rank (--ranks 0 / 0,2: some)
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument(
        "-o", "--output", metavar="FILE",
        help=f"the file to write ({', '.join(FORMATS)}); required",
    )  # fmt: skip
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--step", type=int, metavar="N",
        help="write the graph of backward call N (1-based) instead of the last one",
    )  # fmt: skip
    which.add_argument(
        "--all", action="store_true",
        help="write one file per backward call: -o graph.html gives graph_001.html, "
        "graph_002.html, ...",
    )  # fmt: skip
    parser.add_argument(
        "--force", action="store_true",
        help="replace the -o file (with --all, the numbered files) if it exists",
    )  # fmt: skip
    parser.add_argument("script", metavar="SCRIPT.py", help="the Python file to run")
    script_args = parser.add_argument(
        "args", nargs=argparse.REMAINDER, help="arguments for the script"
    )
    # argparse counts it required: "required: SCRIPT.py, args" for a script given none
    script_args.required = False
    return parser


def _take_trailing(parser: argparse.ArgumentParser, options: argparse.Namespace) -> None:
    """Our options at the end of the script's arguments (``train.py ARGS -o graph.html``),
    taken only when -o did not come before the script."""
    args = list(options.args)
    while args:
        if len(args) >= 2 and args[-2] in ("-o", "--output"):
            options.output, args = args[-1], args[:-2]
        elif args[-1].startswith("--output="):
            options.output, args = args[-1].split("=", 1)[1], args[:-1]
        elif len(args) >= 2 and args[-2] == "--step" and is_int_text(args[-1], signed=True):
            options.step, args = int(args[-1]), args[:-2]
        elif args[-1] == "--all":
            options.all, args = True, args[:-1]
        elif args[-1] == "--force":
            options.force, args = True, args[:-1]
        else:
            break
    if options.step is not None and options.all:
        parser.error("--step and --all are alternatives: pass one of them")
    options.args = args


def main(argv: list[str] | None = None) -> int:
    from .watch import main as watch_main
    from .watch import wants_run_dir

    args = sys.argv[1:] if argv is None else argv
    if args == ["--script-path"]:  # for paddle.distributed.launch, which takes a file
        print(Path(__file__).with_name("launch_entry.py"))
        return 0
    if args[:1] == ["view"]:  # python -m paddleviz_widget view RUN_DIR -o run.html
        from ..runs.view_cli import main as view_main

        return view_main(args[1:])
    if wants_run_dir(args):  # train.py --run-dir runs/exp1
        return watch_main(args)
    parser = _parser()
    options = parser.parse_args(argv)
    if options.output is None:
        _take_trailing(parser, options)
    if options.output is None:
        parser.error(_no_output(options.args))
    if options.step is not None and options.step < 1:
        parser.error(f"--step counts backward calls from 1, got {options.step}")
    script = Path(options.script)
    if not script.is_file():
        parser.error(f"no such script: {script} (pass the path of a .py file)")
    try:  # before the script runs: a bad -o must not cost a training run
        output = check_target(_per_rank(Path(options.output).expanduser().absolute()))
    except (ValueError, OSError) as error:
        parser.error(said(error))
    try:
        refuse_replacing(output, force=options.force, numbered=options.all)
    except FileExistsError as error:
        parser.error(f"{error} (nothing was run)")
    if output.suffix.lower() in (".svg", ".png") and not dot_found():  # not after the training
        parser.error(f"-o {options.output}: {NO_DOT}; or write .html, .json or .dot, which "
                     "need no Graphviz (nothing was run)")  # fmt: skip

    collector = GraphCollector(output, step=options.step, every=options.all)
    session = BackwardCalls(collector.seen, collector.settle)
    try:
        with session:
            status = run_script(script, options.args)
            if status == 0:
                collector.finish()  # inside the trace that recorded the calls
        if status != 0:
            _say(f"{script} exited with status {status}: no graph written")
            return status
        written = collector.write(session.calls)
    except CliError as error:
        _say(str(error))
        return 1
    except (StaticPictureUnavailable, OSError, ValueError) as error:  # e.g. no Graphviz, disk full
        _say(f"could not write {output}: {error}")
        return 1
    finally:
        collector.discard()
    _say(_summary(written, session.calls, options.step))
    return 0


def _no_output(args: list[str]) -> str:
    """Why no -o was taken: none given, or one among the script's arguments, which our
    options at the end are only when nothing follows them that is not ours (a --run-dir so
    placed asked for the watch mode: the same rule)."""
    if args[-1:] == ["--run-dir"]:
        return "--run-dir takes the run log's directory: train.py ARGS --run-dir runs/exp1"
    for i, arg in enumerate(args):
        ours = arg in ("-o", "--output", "--run-dir")
        if ours or arg.startswith(("--output=", "--run-dir=")):
            after = args[i + (1 if "=" in arg else 2) :]
            first = "--run-dir runs/exp1" if arg.startswith("--run-dir") else "-o graph.html"
            return (
                f"{arg} was taken as the script's own argument, as {' '.join(after)!r} follows "
                "it: our options go before SCRIPT.py, or at the very end with nothing of the "
                f"script's after them ({PROG} {first} train.py ARGS)"
            )
    return "pass the file to write with -o, e.g. -o graph.html"


def _per_rank(output: Path) -> Path:
    """Under paddle.distributed.launch every rank runs this command: each writes its own
    file, named by its rank (graph.html -> graph.rank-00001.html), never one file twice."""
    from ..runs.job_rank import job_rank

    job = job_rank()
    if not job.launched:
        return output
    return output.with_name(f"{output.stem}.rank-{job.rank:05d}{output.suffix}")


def _summary(written: list[Path], calls: int, step: int | None) -> str:
    if len(written) > 1:
        return f"wrote {len(written)} graphs, {written[0]} ... {written[-1].name}"
    return f"wrote {written[0]} (backward call {step or calls} of {calls})"


def _say(message: str) -> None:
    say(f"paddleviz_widget: {message}")
