"""The longest busy stretches of a Chromium CPU profile (bench_widget.py / bench_startup.py
--cpu-profile), each with the functions its time went to: what a long main-thread task is made
of. A stretch is a run of samples that are not "(idle)"; "(program)" is the browser's own work
(style, layout, paint, parsing HTML), "(garbage collector)" GC. An unminified bundle
(`PVW_UNMINIFIED=1 npm run build`) gives readable names.

    python benchmarks/profile_tasks.py /tmp/p-*.cpuprofile [--top 3] [--min-ms 100]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def stretches(profile: dict) -> list[tuple[float, float, Counter[str], Counter[str]]]:
    """(start ms, length ms, self ms by function, inclusive ms by function) per busy stretch."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

    def name(node_id: int) -> str:
        f = nodes[node_id]["callFrame"]
        where = f["url"].rsplit("/", 1)[-1]
        if not where:
            return f["functionName"]
        return f"{f['functionName'] or '(anonymous)'} {where}:{f['lineNumber'] + 1}"

    out = []
    t = 0.0
    cur: tuple[float, float, Counter[str], Counter[str]] | None = None
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        t += delta / 1e3
        leaf = name(node_id)
        if leaf == "(idle)":
            if cur:
                out.append(cur)
            cur = None
            continue
        if cur is None:
            cur = (t, 0.0, Counter(), Counter())
        ms = delta / 1e3
        cur = (cur[0], t - cur[0], cur[2], cur[3])
        cur[2][leaf] += ms
        seen = set()
        at: int | None = node_id
        while at is not None:
            label = name(at)
            if label not in seen:
                cur[3][label] += ms
                seen.add(label)
            at = parent.get(at)
    if cur:
        out.append(cur)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="+")
    parser.add_argument("--top", type=int, default=3, help="stretches per profile")
    parser.add_argument("--min-ms", type=float, default=50.0)
    parser.add_argument("--functions", type=int, default=12)
    args = parser.parse_args()
    for path in args.profiles:
        got = sorted(stretches(json.loads(Path(path).read_text())), key=lambda s: -s[1])
        print(f"\n{path}: {len(got)} stretches; longest {[round(s[1]) for s in got[:6]]} ms")
        for start, length, own, inclusive in got[: args.top]:
            if length < args.min_ms:
                break
            print(f"  at {start:8.0f} ms: {length:6.0f} ms")
            mine = own.most_common(args.functions)
            print("    self:      " + "; ".join(f"{k} {v:.0f}" for k, v in mine))
            big = [(k, v) for k, v in inclusive.most_common(40) if k != "(root)"]
            shown = big[: args.functions + 8]
            print("    inclusive: " + "; ".join(f"{k} {v:.0f}" for k, v in shown))


if __name__ == "__main__":
    main()
