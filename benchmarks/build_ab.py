"""build_graph of this tree against another tree's, interleaved in one process (a script).

    python benchmarks/build_ab.py /tmp/base [--model llama-100k] [--reps 5] [--check]

The other tree's package is imported as a copy under another name (``pvbase``), with its
``tracer/capture`` (and ``errors``, ``gc_pause``) taken from this tree's: one trace() session
serves both, so both build from the same walked graph, trace records and layer scopes. Prints
per stage (walk, collect_annotations, annotated_graph, Graph.to_dict) and in total the
median thread CPU time of each tree, blocks alternated. ``--check``: also builds, with both
trees, the documents of the model fresh / after a plain backward / after trace() /
trace(stats=True), and says whether each pair is byte-identical (orjson, keys in their order).
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import importlib
import pkgutil
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from models import HUGE, MODELS

import paddleviz_widget
import paddleviz_widget.tracer.capture as capture

BASE = "pvbase"
STAGES = [
    ("walk", "tracer.build", "walk_backward_graph"),
    ("walk", "tracer.build", "recorded_walk"),  # a traced graph's walk from its record (18a)
    ("collect_annotations", "tracer.build", "collect_annotations"),
    ("annotated_graph", "tracer.build", "annotated_graph"),  # up to round 8
    ("annotated_graph", "tracer.build", "annotated_rows"),  # its rows, from round 9
    ("Graph.to_dict", "graph.model", "Graph.to_dict"),
    ("Graph.to_dict", "tracer.build", "encode_rows"),  # the rows encoded, from round 9
]


def import_base(tree: Path) -> Any:
    """The other tree's package as ``pvbase``, sharing this tree's capture modules."""
    copy = Path("/tmp") / f"{BASE}-{tree.name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree / "paddleviz_widget", copy / BASE)
    for info in pkgutil.walk_packages(capture.__path__, capture.__name__ + "."):
        importlib.import_module(info.name)
    shared = ("paddleviz_widget.tracer.capture", "paddleviz_widget.errors",
              "paddleviz_widget.gc_pause")  # fmt: skip
    sys.path.insert(0, str(copy))
    for name, module in list(sys.modules.items()):  # before the copy imports its own
        if name.startswith(shared):
            sys.modules[BASE + name[len("paddleviz_widget") :]] = module
    base = importlib.import_module(BASE)
    importlib.import_module(BASE + ".tracer.build")
    return base


def wrap_stages(pkg: str, totals: dict[str, float]) -> None:
    for label, module_name, attr in STAGES:
        owner: Any = importlib.import_module(f"{pkg}.{module_name}")
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name, None)
        if original is None:  # a stage the tree does not have (the other tree's name for it)
            continue

        def make(f: Any, label: str) -> Any:
            @functools.wraps(f)
            def wrapper(*args: Any, **kw: Any) -> Any:
                start = time.thread_time()
                try:
                    return f(*args, **kw)
                finally:
                    totals[label] += time.thread_time() - start

            return wrapper

        setattr(owner, name, make(original, label))


def doc_bytes(doc: dict[str, Any]) -> bytes:
    """The document's bytes as the widget sends them (keys in their order: that is compared
    too)."""
    return orjson.dumps(doc)


def check(name: str, model: Any, x: Any, trees: dict[str, Any]) -> bool:
    same = True

    def compare(label: str, y: Any) -> None:
        nonlocal same
        docs = {k: doc_bytes(t.build_graph(y)) for k, t in trees.items()}
        ok = len(set(docs.values())) == 1
        same &= ok
        sizes = ", ".join(f"{k} {len(v):,} B" for k, v in docs.items())
        print(f"  {name} {label}: {'identical' if ok else 'DIFFERENT'} ({sizes})")

    model.clear_gradients()
    y = model(x)
    compare("fresh", y)
    y.sum().backward()
    compare("after backward", y)
    for stats in (False, True):
        model.clear_gradients()
        with paddleviz_widget.trace(model, stats=stats):
            y = model(x)
            y.sum().backward()
        compare(f"trace(stats={stats})", y)
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the other tree (git archive ... | tar -x)")
    parser.add_argument("--model", default="llama-10k", choices=[*MODELS, *HUGE])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="compare documents too")
    parser.add_argument("--cprofile", type=int, metavar="N", help="this tree's top N functions")
    args = parser.parse_args()
    base = import_base(args.base)
    trees = {"before": base, "after": paddleviz_widget}
    totals: dict[str, dict[str, float]] = {k: defaultdict(float) for k in trees}
    for k, t in trees.items():
        wrap_stages(t.__name__, totals[k])
    model, x = {**MODELS, **HUGE}[args.model]()
    if args.check and not check(args.model, model, x, trees):
        print("documents differ")
    model.clear_gradients()
    with paddleviz_widget.trace(model):
        y = model(x)
        y.sum().backward()
    docs = {k: doc_bytes(t.build_graph(y)) for k, t in trees.items()}
    hashes = ", ".join(f"{k} sha256 {hashlib.sha256(v).hexdigest()[:16]}" for k, v in docs.items())
    print(f"traced {args.model}: identical={len(set(docs.values())) == 1} ({hashes})")
    del docs
    if args.cprofile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.runcall(paddleviz_widget.build_graph, y)
        listing = pstats.Stats(profile)
        listing.sort_stats("tottime").print_stats(args.cprofile)
        listing.sort_stats("cumulative").print_stats("paddleviz_widget", args.cprofile)
    runs: dict[str, dict[str, list[float]]] = {k: defaultdict(list) for k in trees}
    for rep in range(args.reps):
        order = list(trees) if rep % 2 == 0 else list(reversed(trees))
        for k in order:
            gc.collect()
            totals[k].clear()
            start, wall = time.thread_time(), time.perf_counter()
            trees[k].build_graph(y)
            runs[k]["build_graph (total)"].append(time.thread_time() - start)
            runs[k]["wall"].append(time.perf_counter() - wall)
            for label, value in totals[k].items():
                runs[k][label].append(value)
    if not args.reps:
        return
    print(f"{args.model}, {args.reps} reps, median thread CPU (ms):")
    for label in [*dict.fromkeys(s[0] for s in STAGES), "build_graph (total)", "wall"]:
        if not (runs["before"][label] and runs["after"][label]):
            continue  # a stage only one tree has
        b = statistics.median(runs["before"][label]) * 1e3
        a = statistics.median(runs["after"][label]) * 1e3
        print(f"  {label:<22} before {b:8.1f}  after {a:8.1f}  {b / a:5.2f}x")


if __name__ == "__main__":
    main()
