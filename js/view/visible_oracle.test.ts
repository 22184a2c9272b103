// buildVisibleGraph (which walks into open groups only) against the plain reading it replaced,
// kept here as the oracle: a pass over every payload node and edge. Same nodes, clusters and
// edges in the same order with the same fields, the same repOf and elementsOf, for the depth
// presets and random open / unfolded sets of the fixtures (real Paddle models, folded or not),
// and of a payload with broken links (missing parents, a parent cycle, duplicate ids).
import { describe, expect, it } from "vitest";
import { representer, groupsToDepth } from "./expansion";
import { foldRuns, heldGroups, parseRunId, type Folded } from "./folding";
import { buildIndex, instanceId, parseInstanceId, type GraphIndex } from "./graph_index";
import { REPEAT_FIXTURES, repeatFixture } from "./repeat_fixtures";
import { repeatsOf } from "./repeats";
import { rng } from "./test_fixtures";
import type { GraphGroup, GraphPayload } from "./types";
import {
  buildVisibleGraph,
  mergedEdgeId,
  type VisibleCluster,
  type VisibleEdge,
  type VisibleGraph,
  type VisibleNode,
} from "./visible";

function oracle(index: GraphIndex, expanded: ReadonlySet<string>, folded?: Folded | null): VisibleGraph {
  const repOf = new Map<string, string>(); // nodes, then groups
  const closedRep = representer(index, expanded);
  // A closed member of a folded run is drawn as the run's slice (members have one call).
  const representative = (id: string): string => {
    const rep = closedRep(id);
    return folded?.sliceOf(rep)?.id ?? rep;
  };
  /** The instance of (expanded) group g that holds node n. */
  const around = (g: string, n: string): string => instanceId(g, index.callOf(g, n));

  const nodes: VisibleNode[] = [];
  const nodeById = new Map<string, VisibleNode>();
  const shown = new Set<string>(); // expanded group instances with something on screen
  const shownGroups = new Set<string>(); // and the groups they are calls of
  for (const id of index.nodes.keys()) {
    const closed = closedRep(id);
    const run = folded?.sliceOf(closed) ?? null;
    const rep = run?.id ?? closed;
    repOf.set(id, rep);
    if (nodeById.has(rep)) continue;
    const node = run ? null : (index.nodes.get(rep) ?? null);
    const inst = node || run ? null : parseInstanceId(index, rep);
    const group = inst ? (index.groups.get(inst.group) ?? null) : null;
    const outer = index.ancestors(run ? run.members[0] : inst ? inst.group : rep); // all expanded, innermost first
    const vn: VisibleNode = {
      id: rep,
      kind: node ? (node.kind === "program_op" ? "op" : node.kind) : "group", // drawn as ops
      node,
      group,
      call: inst?.call ?? 0,
      calls: inst ? index.calls(inst.group).length : 1,
      cluster: outer.length > 0 ? around(outer[0], id) : null,
      ...(run ? { run } : {}),
    };
    nodes.push(vn);
    nodeById.set(rep, vn);
    for (const g of outer) {
      shown.add(around(g, id));
      shownGroups.add(g);
    }
  }
  for (const id of index.groups.keys()) repOf.set(id, representative(id));

  const clusters: VisibleCluster[] = [];
  const clusterById = new Map<string, VisibleCluster>();
  for (const [gid, group] of index.groups) {
    if (!shownGroups.has(gid)) continue; // (and its calls need not be known)
    const pieces = index.calls(gid);
    pieces.forEach((piece, call) => {
      const id = instanceId(gid, call);
      if (!shown.has(id)) return;
      const parents = index.ancestors(gid);
      const parent = parents.length > 0 ? around(parents[0], piece[0]) : null;
      const cluster = { id, group, call, calls: pieces.length, parent };
      clusters.push(cluster);
      clusterById.set(id, cluster);
    });
  }

  const byPair = new Map<string, VisibleEdge>();
  const edges: VisibleEdge[] = [];
  for (const e of index.edges.values()) {
    const source = repOf.get(e.source);
    const target = repOf.get(e.target);
    if (source === undefined || target === undefined || source === target) continue;
    const key = mergedEdgeId(source, target);
    const known = byPair.get(key);
    if (known) {
      known.edges.push(e);
      known.id = key;
    } else {
      const ve = { id: e.id, source, target, edges: [e] };
      byPair.set(key, ve);
      edges.push(ve);
    }
  }
  const edgeById = new Map(edges.map((e) => [e.id, e] as const));

  const elementsOf = (id: string): string[] => {
    if (index.nodes.has(id)) return [repOf.get(id) as string];
    if (!index.groups.has(id)) {
      // A run: its folded node, or whatever its members are drawn as.
      if (nodeById.has(id)) return [id];
      const run = parseRunId(index, id);
      return run ? [...new Set(run.members.flatMap((m) => elementsOf(m)))] : [];
    }
    const out: string[] = [];
    for (const n of index.descendantNodes(id)) {
      const c = around(id, n);
      const el = clusterById.has(c) ? c : (repOf.get(n) as string);
      if (!out.includes(el)) out.push(el);
    }
    return out;
  };
  return { nodes, clusters, edges, repOf, nodeById, edgeById, clusterById, elementsOf };
}

/** Everything a VisibleGraph holds, as plain data (payload objects by id). */
function plain(index: GraphIndex, vg: VisibleGraph) {
  const ids = [...index.nodes.keys(), ...index.groups.keys(), ...repeatsOf(index).runs.map((r) => r.id)];
  return {
    nodes: vg.nodes.map((n) => ({ ...n, node: n.node?.id, group: n.group?.id, run: n.run?.id })),
    clusters: vg.clusters.map((c) => ({ ...c, group: c.group.id })),
    edges: vg.edges.map((e) => ({ ...e, edges: e.edges.map((x) => x.id) })),
    repOf: [...vg.repOf],
    repSize: vg.repOf.size,
    maps: [[...vg.nodeById.keys()], [...vg.edgeById.keys()], [...vg.clusterById.keys()]],
    elements: ids.map((id) => [id, vg.elementsOf(id)]),
    unknown: [vg.repOf.get("no such id"), vg.repOf.has("no such id"), vg.elementsOf("no such id")],
  };
}

function compare(index: GraphIndex, expanded: ReadonlySet<string>, folded: Folded | null): void {
  const fast = buildVisibleGraph(index, expanded, folded);
  // Ask the lazy repOf for every id before comparing, and once after: the order must not matter.
  expect(plain(index, fast)).toEqual(plain(index, oracle(index, expanded, folded)));
  expect(fast.nodes).toEqual(oracle(index, expanded, folded).nodes);
}

/** Payload with broken links: a missing parent, a parent cycle, a node in an unknown group,
 * duplicate node and edge ids, edges to unknown nodes, an empty group, a self-loop. */
function broken(): GraphPayload {
  const graph = repeatFixture("nested");
  const groups: GraphGroup[] = graph.groups;
  const [a, b] = groups;
  groups.push(
    { ...a, id: "gx", parent: "nowhere" },
    { ...a, id: "gy", parent: "gz" },
    { ...a, id: "gz", parent: "gy" },
  );
  groups.push({ ...b, id: "gempty", parent: a.id });
  const [n0, n1, n2] = graph.nodes;
  graph.nodes.push(
    { ...n0, id: "nx", group: "gx" },
    { ...n1, id: "ny", group: "gz" },
    { ...n2, id: "nu", group: "unknown" },
  );
  graph.nodes.push({ ...n1, group: "gy" }); // the same id again: the last one's group counts
  const [e0, e1] = graph.edges;
  graph.edges.push({ ...e0, id: "ex1", source: "nx", target: "ny" }, { ...e0, id: "ex2", source: n0.id, target: "nx" });
  graph.edges.push(
    { ...e1, id: "ex3", source: "nu", target: "nowhere" },
    { ...e1, id: "ex4", source: "ny", target: "ny" },
  );
  graph.edges.push({ ...e1, target: "nu" }); // the same id again
  return graph;
}

const CASES: Record<string, GraphPayload> = { ...REPEAT_FIXTURES, broken: broken() };

describe.each(Object.keys(CASES))("buildVisibleGraph on %s is the plain reading's", (name) => {
  const index = buildIndex(JSON.parse(JSON.stringify(CASES[name])) as GraphPayload);
  const ids = [...index.groups.keys()];
  const members = [...heldGroups(index, true)];

  it("at every depth, folded and not", () => {
    for (let d = 0; d <= index.maxLevel + 1; d++) {
      for (const on of [false, true]) {
        const open = new Set(groupsToDepth(index, d, on));
        compare(index, open, foldRuns(index, open, { on, unfolded: new Set() }));
      }
    }
  });

  it("for random open groups and unfolded members", () => {
    const random = rng(22);
    for (let i = 0; i < 24; i++) {
      const p = [0.1, 0.5, 0.9][i % 3];
      const open = new Set(ids.filter(() => random() < p));
      const unfolded = new Set(members.filter(() => random() < 0.3));
      compare(index, open, i % 4 === 3 ? null : foldRuns(index, open, { on: true, unfolded }));
    }
  });

  it("when one group is opened or closed after a view was drawn", () => {
    const random = rng(5);
    let open = new Set(groupsToDepth(index, 1, true));
    for (let i = 0; i < 12 && ids.length > 0; i++) {
      const g = ids[Math.floor(random() * ids.length)];
      open = new Set(open);
      if (open.has(g)) open.delete(g);
      else for (const x of [g, ...index.ancestors(g)]) open.add(x);
      compare(index, open, foldRuns(index, open, { on: true, unfolded: new Set() }));
    }
  });
});

describe("buildVisibleGraph's cost", () => {
  it("walks into open groups only: a closed top-level group's inside is never visited", () => {
    const index = buildIndex(repeatFixture("llama_tiny"));
    const seen = new Set<string>();
    const ownNodes = index.ownNodes;
    const spy: GraphIndex = {
      ...index,
      ownNodes: (g) => {
        seen.add(String(g));
        return ownNodes(g);
      },
    };
    buildVisibleGraph(spy, new Set());
    expect([...seen]).toEqual(["null"]);
  });
});
