"""How often the annotation step of ``build_graph`` crosses between the package's modules
(issue 24 item 5), on LeNet built after a forward + backward under ``trace(model)`` (traced),
and built fresh from ``model(x)`` (fresh: parameter names, groups from ownership, a replay):

    PYTHONPATH=<checkout> python benchmarks/bench_annotation_hops.py

A sys.setprofile hook follows which paddleviz_widget module runs (call and return events of
frames whose file is in the package; Paddle's and the standard library's frames are skipped,
so a call through them counts as staying in the caller). Printed:
  modules     distinct modules the step runs code of
  stops       distinct (module, function) pairs
  hops        changes of the running module (into a callee, or back to the caller)
  returns     hops into a module that had already been left before (the issue's "come back")
  pairs       distinct (caller module -> callee module) pairs: the web of calls
  both ways   pairs whose callee also calls its caller's module (calls "into X and back")
  collect     calls from tracer/merge/collect.py into another module, by module
Only the annotation step counts: from the call of collect_annotations (and, when there is one,
the merge that replaces it) to its return. The package is the one on PYTHONPATH.
"""

from __future__ import annotations

import collections
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
warnings.filterwarnings("ignore")

from models import lenet  # noqa: E402

import paddleviz_widget  # noqa: E402
from paddleviz_widget import build_graph, trace  # noqa: E402

PACKAGE = str(Path(paddleviz_widget.__file__).resolve().parent)
ENTRY = "collect_annotations"  # the annotation step's function, in every version measured


def _module(frame: FrameType) -> str | None:
    path = frame.f_code.co_filename
    if not path.startswith(PACKAGE):
        return None
    return path[len(PACKAGE) + 1 :].removesuffix(".py")


class Hops:
    def __init__(self) -> None:
        self.depth = 0  # > 0 while the annotation step runs
        self.trail: list[str] = []  # the running module after each change
        self.stops: set[tuple[str, str]] = set()
        self.from_collect: collections.Counter[str] = collections.Counter()
        self.pairs: set[tuple[str, str]] = set()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        mod = _module(frame)
        if event == "call" and frame.f_code.co_name == ENTRY and mod is not None:
            self.depth += 1
        if self.depth == 0:
            return
        if event == "call" and mod is not None:
            self.stops.add((mod, frame.f_code.co_name))
            caller = _caller_module(frame)
            if caller is not None and mod != caller:
                self.pairs.add((caller, mod))
            if caller == "tracer/merge/collect" and mod != caller:
                self.from_collect[mod] += 1
            self._run(mod)
        elif event == "return":
            if mod is not None and frame.f_code.co_name == ENTRY:
                self.depth -= 1
            back = _caller_module(frame)
            if back is not None and self.depth > 0:
                self._run(back)

    def _run(self, mod: str) -> None:
        if not self.trail or self.trail[-1] != mod:
            self.trail.append(mod)


def _caller_module(frame: FrameType) -> str | None:
    f = frame.f_back
    while f is not None:
        mod = _module(f)
        if mod is not None:
            return mod
        f = f.f_back
    return None


def measure(traced: bool) -> Hops:
    model, x = lenet()
    if traced:
        with trace(model):
            y = model(x)
            y.sum().backward()
    else:
        y = model(x)
    hops = Hops()
    sys.setprofile(hops)
    try:
        build_graph(y, model=None if traced else model)
    finally:
        sys.setprofile(None)
    return hops


def main() -> None:
    print(f"package: {PACKAGE}")
    for traced in (True, False):
        _report("traced" if traced else "fresh", measure(traced))


def _report(label: str, h: Hops) -> None:
    returns = sum(1 for k, m in enumerate(h.trail) if m in h.trail[: k - 1])
    print(f"{label}: modules {len({m for m, _ in h.stops})}  stops {len(h.stops)}  "
          f"hops {len(h.trail) - 1}  returns {returns}")  # fmt: skip
    both = sorted(p for p in h.pairs if (p[1], p[0]) in h.pairs)
    print(f"pairs {len(h.pairs)}  both ways {len(both) // 2}: {both[::2]}")
    print("collect ->", dict(sorted(h.from_collect.items())))


if __name__ == "__main__":
    main()
