// buildVisibleGraph of two trees interleaved in one process on one graph document: the first
// (folded) view's plan on a fresh index (js/view/first_view.ts, what the page runs before its
// first layout), the same view drawn again, and a block opened in it (a click).
//   git archive <base> js | tar -x -C /tmp/base
//   node --expose-gc node_modules/.bin/vite-node benchmarks/visible_ab.mjs /tmp/g.json /tmp/base [reps]
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { cpuUsage } from "node:process";

const [path, baseDir, repsArg] = process.argv.slice(2);
const text = readFileSync(path, "utf8");
const load = async (root) => ({
  firstView: (await import(`${root}/js/view/first_view.ts`)).firstView,
  buildIndex: (await import(`${root}/js/view/graph_index.ts`)).buildIndex,
  readGraph: (await import(`${root}/js/view/payload.ts`)).readGraph,
  repeatsOf: (await import(`${root}/js/view/repeats.ts`)).repeatsOf,
  foldRuns: (await import(`${root}/js/view/folding.ts`)).foldRuns,
  expandGroup: (await import(`${root}/js/view/expansion.ts`)).expandGroup,
  buildVisibleGraph: (await import(`${root}/js/view/visible.ts`)).buildVisibleGraph,
});
const here = new URL("..", import.meta.url).pathname.replace(/\/$/, ""); // one path per module
const sides = { before: await load(baseDir.replace(/\/$/, "")), after: await load(here) };
const rows = {};
const time = (label, fn) => {
  const cpu = cpuUsage();
  const start = performance.now();
  const out = fn();
  const used = cpuUsage(cpu);
  (rows[label] ??= []).push([performance.now() - start, (used.user + used.system) / 1000]);
  return out;
};
for (let rep = 0; rep < Number(repsArg ?? 5); rep++) {
  for (const [name, m] of rep % 2 ? Object.entries(sides).reverse() : Object.entries(sides)) {
    const index = m.buildIndex(m.readGraph(JSON.parse(text)).payload);
    m.repeatsOf(index);
    globalThis.gc?.(); // the parse's garbage collected outside the timed steps
    const view = time(`${name}: first view's plan (firstView)`, () => m.firstView(index, { fold: true }));
    const fold = { on: true, unfolded: new Set() };
    const open = new Set(view.expanded);
    time(`${name}: buildVisibleGraph again (${view.vg.nodes.length} nodes)`, () =>
      m.buildVisibleGraph(index, open, m.foldRuns(index, open, fold)),
    );
    const fresh = m.buildIndex(m.readGraph(JSON.parse(text)).payload);
    m.repeatsOf(fresh);
    globalThis.gc?.();
    time(`${name}: buildVisibleGraph of that view, fresh index`, () =>
      m.buildVisibleGraph(fresh, open, m.foldRuns(fresh, open, fold)),
    );
    const run = m.repeatsOf(index).runs.find((r) => r.members.length > 2);
    const clicked = new Set(m.expandGroup(index, open, run ? run.members[1] : [...index.groups.keys()][0]));
    const vg = time(`${name}: buildVisibleGraph, a block opened`, () =>
      m.buildVisibleGraph(index, clicked, m.foldRuns(index, clicked, fold)),
    );
    (rows[`${name}: a block opened, nodes`] ??= []).push([vg.nodes.length, 0]);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${(text.length / 1e6).toFixed(1)} MB of JSON; medians of ${repsArg ?? 5}, ms wall / ms CPU`);
for (const [label, xs] of Object.entries(rows).sort()) {
  const wall = median(xs.map((x) => x[0]));
  const cpu = median(xs.map((x) => x[1]));
  console.log(`  ${label.padEnd(58)} ${wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}`);
}
