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

// The same document read as the page reads it (kernel_sync.ts loadGraph: over tasks), sent as
// one buffer and as the pieces widget/wire.py sends a big graph in: each task's length, in
// order (the parse, decoding, checks, index, the repeated blocks' slices), the longest, and
// the time until the graph is indexed. Tasks are timed between the turns loadGraph gives the page.
const buffer = (value) => new DataView(new TextEncoder().encode(JSON.stringify(value)).buffer);
const doc = JSON.parse(text);
const slices = (list) => {
  const out = [];
  for (let k = 0; k < list.length; k += 20_000) out.push(buffer(list.slice(k, k + 20_000)));
  return out;
};
const wires = {
  "one buffer": new DataView(new TextEncoder().encode(text).buffer),
  pieces: { head: buffer({ ...doc, nodes: [], edges: [] }), nodes: slices(doc.nodes), edges: slices(doc.edges) },
};
const { loadGraph } = await import("../js/kernel_sync");
const { nextTask } = await import("../js/layout/next_task");
console.log("read as the page does (loadGraph), ms: each task in order | longest, until indexed");
for (let rep = 0; rep < Number(repsArg ?? 3); rep++) {
  for (const [label, raw] of Object.entries(wires)) {
    const tasks = [];
    let taskStart = performance.now();
    const start = taskStart;
    // Each turn the read gives the page ends a task; the next starts when the turn comes back.
    const turn = () => {
      tasks.push(performance.now() - taskStart);
      return nextTask().then(() => {
        taskStart = performance.now();
      });
    };
    await new Promise((resolve) =>
      loadGraph(raw, () => true, () => resolve(tasks.push(performance.now() - taskStart)), 1, turn),
    );
    const all = tasks.map((t) => t.toFixed(0)).join(" ");
    console.log(`  ${label.padEnd(11)} ${all} | ${Math.max(...tasks).toFixed(0)}, ${(performance.now() - start).toFixed(0)}`);
  }
}
