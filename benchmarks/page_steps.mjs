// The page's steps before a big graph's first view, timed in Node on one graph document: the
// JSON parse, readGraph (checks and decoding), buildIndex, the repeated blocks' detection and
// the first (folded) view's plan (js/view/first_view.ts). Each but the repeated blocks (read in
// ~100 ms slices: js/kernel_sync.ts) is one main-thread task in the page today.
//   PYTHONPATH=. .venv/bin/python benchmarks/profile_build.py --model llama-100k --save /tmp/g.json
//   npx vite-node benchmarks/page_steps.mjs /tmp/g.json [reps]
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { firstView } from "../js/view/first_view";
import { buildIndex } from "../js/view/graph_index";
import { readGraph } from "../js/view/payload";
import { repeatsOf } from "../js/view/repeats";

const [path, repsArg] = process.argv.slice(2);
const text = readFileSync(path, "utf8");
const rows = {};
for (let rep = 0; rep < Number(repsArg ?? 3); rep++) {
  let start = performance.now();
  const lap = (label) => {
    const now = performance.now();
    (rows[label] ??= []).push(now - start);
    start = now;
  };
  const read = readGraph(JSON.parse(text));
  lap("JSON.parse + readGraph");
  const index = buildIndex(read.payload);
  lap("buildIndex");
  repeatsOf(index);
  lap("repeated blocks (sliced)");
  const view = firstView(index, { fold: true });
  lap(`first view (${view.vg.nodes.length} nodes)`);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${(text.length / 1e6).toFixed(1)} MB of JSON; ms: the first run (the page's case: code not yet compiled), median`);
for (const [label, times] of Object.entries(rows)) {
  console.log(`  ${label.padEnd(34)} ${times[0].toFixed(0).padStart(6)} ${median(times).toFixed(0).padStart(6)}`);
}
