"""``python -m paddleviz_widget view RUN_DIR -o run.html``: the run explorer of a run log as one
self-contained HTML page (runs/view_page.py)."""

from __future__ import annotations

import argparse

from ..stderr_line import say

PROG = "python -m paddleviz_widget view"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write the run explorer of a run log (the run_dir of trace(..., "
        "run_dir=...)) as one HTML page that opens offline, with no kernel: the layer x step "
        "heatmap of gradient norms, the loss curve, the problems found, every step's "
        "per-parameter summary and the graphs of the fully captured steps. A run still being "
        "written is shown as it is now.",
        epilog=f"example:\n  {PROG} runs/exp1 -o run.html\nAn existing -o file is not replaced "
        "unless --force is given.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run log's directory (or a "
                        "multi-rank job's, holding rank-NNNNN/ logs)")  # fmt: skip
    parser.add_argument(
        "-o", "--output", metavar="FILE.html", required=True, help="the page to write"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace the -o file if it exists"
    )  # an existing page is not replaced without it, as in the graph mode (export/save.py)
    parser.add_argument("--title", help="the page's title (default: the run directory's name)")
    return parser


def main(argv: list[str]) -> int:
    parser = _parser()
    options = parser.parse_args(argv)
    from ..export.save import refuse_replacing, said
    from .ranks import RankedRun, open_any
    from .reader import RunLogError
    from .view_page import check_run_page, save_run_html

    try:  # before the run is read: a big log takes a while
        output = check_run_page(options.output)
        refuse_replacing(output, force=options.force)
    except FileExistsError as error:
        parser.error(f"{error} (nothing was written)")
    except (OSError, ValueError) as error:
        parser.error(said(error))
    try:
        run = open_any(options.run_dir)  # a run log, or a multi-rank job's rank-NNNNN/ logs
        written = save_run_html(run, output, title=options.title)
    except RunLogError as error:
        _say(str(error))
        return 1
    except (OSError, ValueError) as error:
        _say(f"could not write {output}: {error}")
        return 1
    size = written.stat().st_size / 1e6
    if isinstance(run, RankedRun):
        _say(f"wrote {written} ({size:.1f} MB): {_count(len(run.ranks), 'rank')}, "
             f"{_count(len(run.report()), 'cross-rank finding')}")  # fmt: skip
        return 0
    _say(
        f"wrote {written} ({size:.1f} MB): {_count(len(run.steps), 'step')}, "
        f"{_count(len(run.captured_steps), 'full capture')}, "
        f"{_count(len(run.problems()), 'problem')}"
    )
    return 0


def _count(n: int, noun: str) -> str:
    """'1 problem', '3 problems'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _say(message: str) -> None:
    say(f"paddleviz_widget: {message}")
