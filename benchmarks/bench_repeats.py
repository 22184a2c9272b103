"""Repeated blocks (js/view/repeats.ts): how long the browser takes to find them, and what
folding them does to the default view, on real graphs of benchmarks/models.py.

Each graph is built as the widget gets it (traced), written to a JSON file and read by a Node
script (repeats_timing.mjs, bundled by esbuild) that times, medians of ``--reps``:
- **index**: ``buildIndex`` alone (what every view already pays);
- **detect**: ``findRepeats`` on a fresh index (with the index's lazily built parts it needs
  first: the edge lists and each candidate's connected parts); **again**: on an index that
  has them (the detection proper);
- **default view**: the automatic depth, then the visible graph, folded and not.

    .venv/bin/python benchmarks/bench_repeats.py                 # llama-10k, resnet50
    .venv/bin/python benchmarks/bench_repeats.py --models llama-10k chain-100k --reps 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import common
from models import HUGE, MODELS

from paddleviz_widget import build_graph, trace

ESBUILD = common.ROOT / "node_modules" / ".bin" / "esbuild"
TIMING = common.HERE / "repeats_timing.mjs"


def payload(name: str) -> dict:
    model, x = {**MODELS, **HUGE}[name]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    return build_graph(y, model=model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["llama-10k", "resnet50"])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "timing.mjs"
        subprocess.run(
            [ESBUILD, TIMING, "--bundle", "--platform=node", "--format=esm",
             f"--outfile={bundle}", "--log-level=warning"],
            check=True,
        )  # fmt: skip
        print(
            f"{'model':<11} {'nodes':>7} {'groups':>6} {'runs':>4} {'members':>7} {'longest':>7}"
            f" {'index':>8} {'detect':>8} {'again':>8}   default view: folded | not"
        )
        for name in args.models:
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(payload(name)), encoding="utf-8")
            out = subprocess.run(
                ["node", bundle, path, str(args.reps)], check=True, capture_output=True, text=True
            )
            r = json.loads(out.stdout)
            f, p = r["folded"], r["plain"]
            print(
                f"{name:<11} {r['nodes']:>7,} {r['groups']:>6,} {r['runs']:>4} {r['members']:>7,}"
                f" {r['longest']:>7} {r['index_ms']:>6.1f}ms {r['fresh_ms']:>6.1f}ms"
                f" {r['warm_ms']:>6.1f}ms   depth {f['depth']}, {f['nodes']} nodes,"
                f" {f['ms']:.0f} ms | depth {p['depth']}, {p['nodes']} nodes, {p['ms']:.0f} ms"
            )
            assert f["nodes"] == f["counted"] and p["nodes"] == p["counted"]


if __name__ == "__main__":
    main()
