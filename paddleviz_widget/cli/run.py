"""``python -m paddleviz_widget.run example.py [args]``: the seed paddleviz's ``run.py``.

The seed ran the script with GLOG_v=6 and scraped the log afterwards. Here the script simply
runs inside ``trace()``, so ``make_graph``/``build_graph``/``GraphWidget`` calls in it get
gradient annotations and layer groups, with no environment variable and nothing on stderr.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from ..tracer import trace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paddleviz_widget.run",
        description="Run a Paddle script with its backward passes traced for paddleviz_widget.",
    )
    parser.add_argument("script", help="the Python file to run, e.g. example.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    options = parser.parse_args(argv)
    script = Path(options.script)
    if not script.is_file():
        parser.error(f"no such script: {script} (pass the path of a .py file)")
    sys.argv = [str(script), *options.args]
    sys.path.insert(0, str(script.resolve().parent))
    with trace():
        runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
