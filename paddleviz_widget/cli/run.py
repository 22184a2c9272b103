"""``python -m paddleviz_widget.run example.py [args]``: the seed paddleviz's ``run.py``.

The seed ran the script with GLOG_v=6 and scraped the log afterwards. Here the script simply
runs inside ``trace()``, so ``make_graph``/``build_graph``/``GraphWidget`` calls in it get
gradient annotations and layer groups, with no environment variable and nothing on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..tracer import trace
from .script_runner import run_script
from .uncaught import leave


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paddleviz_widget.run",
        description="Run a Paddle script with its backward passes traced for paddleviz_widget.",
    )
    parser.add_argument("script", help="the Python file to run, e.g. example.py")
    script_args = parser.add_argument(
        "args", nargs=argparse.REMAINDER, help="arguments for the script"
    )
    script_args.required = False  # argparse's own: "required: script, args" for a script with none
    options = parser.parse_args(argv)
    script = Path(options.script)
    if not script.is_file():
        parser.error(f"no such script: {script} (pass the path of a .py file)")
    with trace():  # run as `python example.py` would: its traceback and exit status its own
        return run_script(script, options.args)


if __name__ == "__main__":
    leave(main())
