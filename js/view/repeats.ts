// Repeated blocks: runs of consecutive sibling layer groups with the same structure, such as the
// decoder layers of an LLM ("model.layers.0" ... "model.layers.31"). Pure; found once per graph
// (repeatsOf caches them per index), and the only implementation of this rule.
//
// Two groups have the same structure when their nodes, read in a canonical order, are the same:
// op names, parameter shapes and dtypes, the sub-layer each node sits in (its path below the
// member and its type), and every edge between them (which node, which next_functions
// position, which slot, which gradient dtype and shape). The canonical order is local to the
// member: breadth-first from the nodes no edge inside the member enters, following each
// node's edges in next_functions order; two identical blocks are read alike wherever the rest
// of the graph puts them. Names may differ only by the index that ends them.
import type { GraphIndex } from "./graph_index";
import { createSignatures, createSignaturesSteps, type Signature } from "./signatures";

export interface RepeatRun {
  /** "<first member>..<last member>": the run's id, also its id as drawn when folded whole. */
  id: string;
  /** The group around the members (null: top level). */
  parent: string | null;
  /** Member group ids in order, at least two. */
  members: readonly string[];
  /** The members' name without its index: "model.layers" for "model.layers.0". */
  prefix: string;
  /** Index of the first member (the next ones count up by one). */
  start: number;
  type: string;
}

export interface Repeats {
  readonly runs: readonly RepeatRun[];
  /** The run a group is a member of. */
  runOf(groupId: string): RepeatRun | undefined;
  /** Runs among the child groups of `parent` (null: top level), in order. */
  runsIn(parent: string | null): readonly RepeatRun[];
}

/** Separator of a run id's two ends; payload ids hold no "..". */
export const RUN_ID_SEPARATOR = "..";

/** The id of the members from `first` to `last` of a run, drawn as one node. */
export function runSliceId(first: string, last: string): string {
  return `${first}${RUN_ID_SEPARATOR}${last}`;
}

/** "model.layers.3" -> ["model.layers", 3]; "3" -> ["", 3]; null when no index ends it. */
export function splitIndex(name: string): [string, number] | null {
  const dot = name.lastIndexOf(".");
  const tail = name.slice(dot + 1);
  if (!/^(0|[1-9]\d{0,8})$/.test(tail)) return null;
  return [dot < 0 ? "" : name.slice(0, dot), Number(tail)];
}

/** "model.layers.0–7": the range of names a run (or part of it) stands for. */
export function rangeName(run: RepeatRun, from: number, to: number): string {
  const dot = run.prefix ? `${run.prefix}.` : "";
  return `${dot}${run.start + from}\u2013${run.start + to}`;
}

function sameSignature(a: Signature | null, b: Signature | null): boolean {
  if (a === null || b === null || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** Every run of two or more consecutive sibling groups of one type, named `prefix.k`,
 * `prefix.k+1`, ..., with equal signatures. Signatures are computed only for groups that have
 * such a neighbour, so the cost is linear in the nodes of those groups. */
export function findRepeats(index: GraphIndex): Repeats {
  return finish(findRepeatsInSlices(index, Infinity));
}

function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Sibling groups looked at between two reads of the clock (a slice ends at most this many
 * groups late). */
const CLOCK_EVERY = 16;

/** findRepeats in slices of about `sliceMs` each (a 100k-GradNode graph takes ~0.6 s, too
 * long for one task of the page): each `next()` runs one slice; the return value is the runs. */
export function* findRepeatsInSlices(index: GraphIndex, sliceMs: number): Generator<void, Repeats> {
  const timed = Number.isFinite(sliceMs); // the kernel's V8 has no performance.now
  let sliceEnd = timed ? performance.now() + sliceMs : Infinity;
  let signature: ((groupId: string) => Signature | null) | null = null; // made on first use
  const signatures = new Map<string, Signature | null>();
  // Sliced (a big graph in the page): the signatures' set-up in steps of its own, up front.
  if (timed) {
    signature = yield* createSignaturesSteps(index);
    sliceEnd = performance.now() + sliceMs;
  }
  const signatureOf = (id: string): Signature | null => {
    if (!signatures.has(id)) {
      signature ??= createSignatures(index);
      signatures.set(id, signature(id));
    }
    return signatures.get(id) ?? null;
  };

  // Members drawn inside one part of their parent (a parent whose children are not connected
  // inside it is drawn in several parts: one node cannot stand in two of them).
  const sameCall = (parent: string | null, a: string, b: string): boolean => {
    if (parent === null) return true;
    const first = (g: string): string => index.firstNode(g) as string;
    return index.callOf(parent, first(a)) === index.callOf(parent, first(b));
  };
  const runs: RepeatRun[] = [];
  const byParent = new Map<string | null, RepeatRun[]>();
  for (const [parent, children] of index.childGroups) {
    let current: string[] = [];
    let key = "";
    let last = -1;
    const close = (): void => {
      if (current.length >= 2) {
        const first = index.groups.get(current[0]);
        const split = splitIndex(first?.name ?? "") as [string, number];
        const run: RepeatRun = {
          id: runSliceId(current[0], current[current.length - 1]),
          parent,
          members: current,
          prefix: split[0],
          start: split[1],
          type: first?.type ?? "",
        };
        runs.push(run);
        const list = byParent.get(parent);
        if (list) list.push(run);
        else byParent.set(parent, [run]);
      }
      current = [];
    };
    for (let c = 0; c < children.length; c++) {
      const id = children[c];
      // The clock read every CLOCK_EVERY groups: once per group cost ~20 ms on 18k groups.
      if (timed && c % CLOCK_EVERY === 0 && performance.now() > sliceEnd) {
        yield;
        sliceEnd = performance.now() + sliceMs;
      }
      const group = index.groups.get(id);
      const split = group ? splitIndex(group.name) : null;
      if (!group || !split) {
        close();
        continue;
      }
      const groupKey = `${split[0]}\u0000${group.type}`;
      const follows =
        current.length > 0 &&
        groupKey === key &&
        split[1] === last + 1 &&
        sameSignature(signatureOf(id), signatureOf(current[current.length - 1])) &&
        sameCall(parent, id, current[current.length - 1]);
      if (!follows) {
        close();
        key = groupKey;
      }
      current.push(id);
      last = split[1];
    }
    close();
  }
  const runOf = new Map<string, RepeatRun>();
  for (const run of runs) for (const m of run.members) runOf.set(m, run);
  return {
    runs,
    runOf: (groupId) => runOf.get(groupId),
    runsIn: (parent) => byParent.get(parent) ?? [],
  };
}

const cache = new WeakMap<GraphIndex, Repeats>();

/** findRepeats(index), computed once per index. */
export function repeatsOf(index: GraphIndex): Repeats {
  return finish(repeatsInSlices(index, Infinity));
}

/** repeatsOf(index) in slices of about `sliceMs` (see findRepeatsInSlices). */
export function* repeatsInSlices(index: GraphIndex, sliceMs: number): Generator<void, Repeats> {
  let repeats = cache.get(index);
  if (!repeats) {
    repeats = yield* findRepeatsInSlices(index, sliceMs);
    cache.set(index, repeats);
  }
  return repeats;
}
