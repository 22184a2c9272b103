// Node side of bench_repeats.py (bundled by esbuild, which reads the TypeScript): times the
// detection of repeated blocks (js/view/repeats.ts) and what folding costs the default view,
// on a graph document given as a JSON file. Prints one JSON object.
//   node <bundle>.mjs graph.json reps
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { createCounter } from "../js/view/budget";
import { openToDepth } from "../js/view/expansion";
import { foldRuns } from "../js/view/folding";
import { buildIndex } from "../js/view/graph_index";
import { readGraph } from "../js/view/payload";
import { findRepeats } from "../js/view/repeats";
import { buildVisibleGraph } from "../js/view/visible";

const [path, repsArg] = process.argv.slice(2);
const reps = Number(repsArg ?? 7);
const doc = JSON.parse(readFileSync(path, "utf8"));
const payload = readGraph(doc).payload;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const t = performance.now();
  const result = fn();
  return [performance.now() - t, result];
};
const sample = (setup, fn) => {
  const times = [];
  let result;
  for (let k = 0; k < reps; k++) {
    const input = setup();
    const [ms, r] = time(() => fn(input));
    times.push(ms);
    result = r;
  }
  return [median(times), result];
};

// Detection on a fresh index: includes the index's lazily built parts it is the first to
// need (edge lists per node, each member's connected parts). Then on an index that has them.
const [index_ms] = sample(() => null, () => buildIndex(payload));
const [fresh_ms, repeats] = sample(() => buildIndex(payload), (index) => findRepeats(index));
const warm = buildIndex(payload);
findRepeats(warm);
const [warm_ms] = sample(() => warm, (index) => findRepeats(index));

// The default view (automatic depth), folded and not.
const state = { on: true, unfolded: new Set() };
const view = (fold) => {
  const index = buildIndex(payload);
  const [ms, result] = time(() => {
    const { depth, expanded } = openToDepth(index, -1, fold);
    const open = new Set(expanded);
    const vg = buildVisibleGraph(index, open, fold ? foldRuns(index, open, state) : null);
    return { depth, nodes: vg.nodes.length, counted: createCounter(index, fold ? () => state : null).count(open) };
  });
  return { ms, ...result };
};
const folded = view(true);
const plain = view(false);

const members = repeats.runs.reduce((n, r) => n + r.members.length, 0);
console.log(
  JSON.stringify({
    nodes: payload.nodes.length,
    groups: payload.groups.length,
    runs: repeats.runs.length,
    members,
    longest: Math.max(0, ...repeats.runs.map((r) => r.members.length)),
    index_ms,
    fresh_ms,
    warm_ms,
    folded,
    plain,
  }),
);
