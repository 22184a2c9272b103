// The kernel's side of the view (GraphWidget, in Python): the graph it sends as one binary
// buffer of JSON text, and its view requests, answered here, where the view rules live. The
// request / answer protocol is described once, above answerRequest; the keys and who writes
// them are in ./model_contract.ts.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "./model_contract";
import { openToDepth } from "./view/auto_open";
import { applyEdits, readRequest, type ViewState } from "./view/expansion";
import { buildIndex, buildIndexSteps, type GraphIndex } from "./view/graph_index";
import { type ListReader, listReader, PayloadError, readGraph, readGraphSteps } from "./view/payload";
import { repeatsInSlices } from "./view/repeats";
import { type Inflated, type Inflater, inflateHere, pageInflater } from "./inflate_worker";
import { nextTask } from "./layout/next_task";

/** The page's message to the kernel once a widget's first drawing is painted: the kernel makes
 * the static picture for saved notebooks after it (widget/late_picture.py), not meanwhile. */
export const PAINTED = "pvw-painted";

/** Say PAINTED once the next frame is painted (a task after the frame's rendering). */
export function tellPainted(model: AnyModel<WidgetModel>): void {
  requestAnimationFrame(() => setTimeout(() => model.send({ type: PAINTED }), 0));
}

/** Graph payloads from this many bytes on (~20k GradNodes) are read over several tasks. */
export const READ_IN_STEPS_FROM = 4_000_000;
/** A big graph's reading runs its steps (a piece parsed, ~20k nodes decoded or checked, ...)
 * back to back for this long, then lets the page have a turn: fewer, fuller tasks than one per
 * step, none much longer than this plus its longest step. */
const TASK_MS = 50;
/** Longest slice of work the repeated blocks' detection gives one step. */
const SLICE_MS = 50;

export type ReadGraph = ReturnType<typeof readGraph>;

/** A big graph as the kernel sends it (widget/wire.py graph_pieces): the document's JSON with
 * empty `nodes` and `edges`, and those lists in slices, each its own JSON text, deflated
 * (zlib) when `deflate` is true. */
type Buffer = DataView | ArrayBuffer;
type Pieces = { head: Buffer; nodes: Buffer[]; edges: Buffer[]; deflate?: boolean };

const isBuffer = (value: unknown): value is Buffer => value instanceof DataView || value instanceof ArrayBuffer;

function isPieces(value: unknown): value is Pieces {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  const lists = [v.nodes, v.edges];
  return isBuffer(v.head) && lists.every((l) => Array.isArray(l) && l.every(isBuffer));
}

const parseText = (value: Buffer): unknown => JSON.parse(new TextDecoder().decode(value));

/**
 * Deflated pieces inflated, one piece per `step` (which says whether to go on): the same pieces
 * as plain JSON text; anything else as it is. Undefined once `step` says stop; a piece that
 * does not inflate gives a PayloadError, which readGraph shows.
 */
export async function inflatePieces(value: unknown, step: () => Promise<boolean> = async () => true): Promise<unknown> {
  if (!isPieces(value) || value.deflate !== true) return value;
  const out: Pieces = { head: value.head, nodes: [], edges: [] };
  try {
    out.head = inflated(await inflateHere(value.head));
    for (const key of ["nodes", "edges"] as const) {
      for (const piece of value[key]) {
        if (!(await step())) return undefined;
        out[key].push(inflated(await inflateHere(piece)));
      }
    }
  } catch (err) {
    return notInflating(err as Error);
  }
  return out;
}

const inflated = (got: Inflated): DataView => {
  if (got instanceof Error) throw got;
  return got;
};
const notInflating = (err: Error): PayloadError =>
  new PayloadError(`the graph the kernel sent does not inflate (${err.message})`);

/**
 * Deflated pieces read as readSteps reads them inflated, while `inflater` (a worker) inflates
 * them: each piece parsed and decoded once it is inflated, the next ones inflating meanwhile.
 * Its steps yield undefined (a task's worth of work done) or a promise (a piece inflating
 * elsewhere, whose bytes the yield gives back: loadGraph's inTasks waits for it).
 * What is said is what inflatePieces then readSteps say: a piece that does not inflate (the
 * first, in order) before anything else, so every piece is waited for before any other error.
 */
function* readInflatingSteps(value: Pieces, inflater: Inflater): Generator<unknown, ReadGraph, unknown> {
  const head = inflater(value.head);
  const lists = { nodes: value.nodes.map(inflater), edges: value.edges.map(inflater) };
  const all = [head, ...lists.nodes, ...lists.edges];
  /** The read once every piece is inflated: the first that does not, else `otherwise` (or the
   * pieces read whole, by readSteps). */
  function* whenInflated(otherwise: ReadGraph | null): Generator<unknown, ReadGraph, unknown> {
    const got = (yield Promise.all(all)) as Inflated[];
    const bad = got.find((g) => g instanceof Error);
    if (bad !== undefined) return readGraph(notInflating(bad as Error));
    if (otherwise !== null) return otherwise;
    const [h, ...rest] = got as DataView[];
    const n = lists.nodes.length;
    return yield* readSteps({ head: h, nodes: rest.slice(0, n), edges: rest.slice(n) });
  }
  const headBytes = (yield head) as Inflated;
  if (headBytes instanceof Error) return readGraph(notInflating(headBytes));
  let reader: ListReader | null = null;
  try {
    reader = listReader(parseText(headBytes));
  } catch {
    // said by the whole read, once every piece is inflated
  }
  if (reader === null) return yield* whenInflated(null);
  for (const key of ["nodes", "edges"] as const) {
    for (const piece of lists[key]) {
      const bytes = (yield piece) as Inflated;
      if (bytes instanceof Error) return readGraph(notInflating(bytes)); // the first in order
      yield;
      let list: unknown[];
      try {
        list = pieceList(bytes);
      } catch (err) {
        return yield* whenInflated(readGraph(notJson(err)));
      }
      yield* reader[key](list as Record<string, unknown>[]);
    }
  }
  return yield* reader.done();
}

/**
 * The synced graph's JSON parsed in steps (each yield: a task's worth of work done): one buffer
 * in one step; pieces one piece a step, the lists put back in place (the same document as one
 * JSON.parse of the whole). Text that is not JSON gives a PayloadError, which readGraph shows.
 */
function* parseSteps(value: unknown): Generator<void, unknown> {
  try {
    if (isBuffer(value)) return parseText(value);
    if (!isPieces(value)) return value;
    if (value.deflate === true) return new PayloadError("the graph's pieces are deflated: inflatePieces first");
    const doc = parseText(value.head) as Record<string, unknown>;
    for (const key of ["nodes", "edges"] as const) {
      const lists: unknown[][] = [];
      for (const piece of value[key]) {
        yield;
        lists.push(pieceList(piece));
      }
      // One native copy (concat), not a push per item run cold: the same list.
      doc[key] = lists.length === 1 ? lists[0] : ([] as unknown[]).concat(...lists);
    }
    return doc;
  } catch (err) {
    return notJson(err);
  }
}

/** A piece's list as parsed; anything else (not the kernel's) iterated, as before (a value
 * that is not iterable throws "list is not iterable": the variable's name is in the message). */
function pieceList(piece: Buffer): unknown[] {
  const list = parseText(piece) as unknown[];
  return Array.isArray(list) ? list : [...(list as Iterable<unknown>)];
}

/** Not null: readGraph would take that for "no graph yet" and say nothing. */
const notJson = (err: unknown): PayloadError =>
  new PayloadError(`the graph the kernel sent is not JSON text (${(err as Error).message})`);

/**
 * The synced graph read in steps (readGraph of graphDocument). Plain pieces of a 2.x document
 * are decoded as they are parsed, each piece's list then dropped: a 100k-node graph's parsed
 * objects die young instead of living beside the decoded ones until the end (the page's
 * garbage collection at 100k). After a decoding error the remaining pieces are still parsed:
 * a piece that is not JSON is said first, as when the whole was parsed before decoding.
 */
export function* readSteps(value: unknown): Generator<unknown, ReadGraph, unknown> {
  const whole = function* (): Generator<void, ReadGraph> {
    return yield* readGraphSteps(yield* parseSteps(value));
  };
  if (!isPieces(value) || value.deflate === true) return yield* whole();
  let reader: ListReader | null = null;
  try {
    reader = listReader(parseText(value.head));
  } catch {
    // said by the whole read, as before
  }
  if (reader === null) return yield* whole();
  for (const key of ["nodes", "edges"] as const) {
    for (const piece of value[key]) {
      yield;
      let list: unknown[];
      try {
        list = pieceList(piece);
      } catch (err) {
        return readGraph(notJson(err));
      }
      yield* reader[key](list as Record<string, unknown>[]);
    }
  }
  return yield* reader.done();
}

/** Drain a generator of steps at once. */
function run<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** The synced graph document (JSON text from the kernel, one buffer or pieces, or a plain
 * object). */
export function graphDocument(value: unknown): unknown {
  return run(parseSteps(value));
}

/** Byte size of a synced graph sent as buffers (0 for a plain object). */
export function graphBytes(value: unknown): number {
  if (isBuffer(value)) return value.byteLength;
  if (!isPieces(value)) return 0;
  return [value.head, ...value.nodes, ...value.edges].reduce((sum, b) => sum + b.byteLength, 0);
}

/**
 * Read and index the synced graph, then call `done`: at once for a small one; a big one (a
 * 100k-node payload is ~20 MB; pieces are sent for big ones only) over several tasks, so that
 * the page stays responsive: its pieces inflated and parsed one by one, the nodes decoded, the edges, the
 * checks, the index, then its repeated blocks found in slices. `current()` false drops it (a
 * newer graph came). Returns whether it waits.
 */
export function loadGraph(
  raw: unknown,
  current: () => boolean,
  done: (read: ReadGraph, index: GraphIndex, inSteps: boolean) => void,
  inStepsFrom: number = READ_IN_STEPS_FROM,
  turn: () => Promise<void> = nextTask, // the page's turn (benchmarks/page_steps.mjs times tasks)
  inflater: Inflater | null = pageInflater(), // deflated pieces inflated in a worker (null: here)
): boolean {
  if (graphBytes(raw) < inStepsFrom && !isPieces(raw)) {
    const read = readGraph(graphDocument(raw));
    done(read, buildIndex(read.payload), false);
    return false;
  }
  // The page's turn (a macrotask, no timer clamping) once the task's time is spent: whether the
  // read is still current. The first call always yields (nothing is read in the caller's task).
  let until = Number.NEGATIVE_INFINITY;
  const step = async (): Promise<boolean> => {
    if (performance.now() < until) return current();
    await turn();
    until = performance.now() + TASK_MS;
    return current();
  };
  /** The steps of `steps` in as few tasks as TASK_MS allows; its result, or undefined once not
   * current. */
  const inTasks = async <T>(steps: Generator<unknown, T, unknown>): Promise<{ value: T } | undefined> => {
    let sent: unknown;
    for (;;) {
      const next = steps.next(sent);
      sent = undefined;
      if (!next.done && next.value instanceof Promise) {
        // A piece inflating elsewhere: the page is free meanwhile. The task's budget is not
        // renewed: a piece inflated already resolves in this same task, which must still end.
        sent = await next.value;
        if (!current()) return undefined;
        continue;
      }
      if (!(await step())) return undefined;
      if (next.done) return { value: next.value };
    }
  };
  void (async () => {
    if (!(await step())) return;
    let steps: Generator<unknown, ReadGraph, unknown>;
    if (inflater !== null && isPieces(raw) && raw.deflate === true) steps = readInflatingSteps(raw, inflater);
    else {
      const text = await inflatePieces(raw, step);
      if (text === undefined) return;
      steps = readSteps(text);
    }
    const read = await inTasks(steps);
    if (read === undefined) return;
    const index = await inTasks(buildIndexSteps(read.value.payload));
    if (index === undefined) return;
    // Repeated blocks (view/repeats.ts), found in slices, cached for the first view's plan.
    if ((await inTasks(repeatsInSlices(index.value, SLICE_MS))) === undefined) return;
    // The first view's answer and plan in a task of their own (draw_loop.ts loaded()).
    until = Number.NEGATIVE_INFINITY;
    if (!(await step())) return;
    done(read.value, index.value, true);
  })();
  return true;
}

/*
 * The view request protocol. The page owns the view rules (group levels, the automatic depth,
 * visible-node counts: js/view), so Python asks rather than decides:
 * - `_request` = {id, depth, edits}, written by the kernel only (GraphWidget._ask, ._edit):
 *   open the groups to `depth` (-1: the page's automatic depth), then apply `edits` in order
 *   (["open", id], ["close", id], ["all"], ["set", ids]: view/expansion.ts applyEdits). A new
 *   depth or a new graph starts a new request (id + 1, no edits); expand()/collapse() and
 *   setting `expanded` by hand append edits to the current one.
 * - `_resolved` = [request id, edits applied], written by the page only: how far it got.
 *   The page answers (answerKernel) before its next drawing: a new id from scratch, a known
 *   one by applying only the edits past the count, on top of what is shown (clicks included);
 *   then it writes `depth` and `expanded` back, and `_resolved`.
 * - Each side writes only its own key of the two, so a late message from the other side
 *   never undoes it. Python sets `expanded` too, as a guess to read until the answer comes
 *   (GraphWidget._answered: `_resolved` equals [id, len(edits)]).
 * A saved page (export/standalone.py) starts with request 1 and `_resolved` [], and the
 * same code answers it.
 */

export type Answer = ViewState & { _resolved: [number, number] };

/**
 * The answer to the kernel's request (GraphWidget._request), or null if there is nothing new:
 * from scratch when the request is new, else only the edits not applied yet (on top of what
 * is shown, clicks included). `resolved` is how far the model got ([id, edits]).
 */
export function answerRequest(
  index: GraphIndex,
  request: unknown,
  resolved: unknown,
  shown: () => ViewState,
  fold = false, // repeated blocks folded (GraphWidget.fold): depths leave their members closed
): Answer | null {
  const r = readRequest(request);
  if (r === null) return null;
  const [id, count] = Array.isArray(resolved) ? resolved : [];
  const n = r.edits.length;
  const known = id === r.id && typeof count === "number" && count <= n;
  if (known && count === n) return null;
  const start = known ? shown() : openToDepth(index, r.depth, fold);
  const next = applyEdits(index, start, r.edits.slice(known ? count : 0), fold);
  return { ...next, _resolved: [r.id, n] };
}

/** The `_resolved` this page last wrote on each model (answerKernel), as JSON. */
const lastAnswer = new WeakMap<object, string>();

/**
 * Whether `model`'s `_resolved` is no longer the page's last answer, which only the kernel's
 * whole state, sent from before that answer reached it, does: JupyterLab's widget manager asks
 * the kernel for every widget's state as it connects, and a kernel busy with the notebook's
 * first cells replies after the page has answered. The `expanded` it brings back (nothing
 * open) would be drawn for a moment and use up the graph's first view (first_views.ts); the
 * page answers again instead, the same answer, so nothing is redrawn.
 */
export function answerUndone(model: AnyModel<WidgetModel>): boolean {
  const mine = lastAnswer.get(model);
  return mine !== undefined && mine !== JSON.stringify(model.get("_resolved"));
}

/** Answer the kernel's request on `model` if there is anything new; whether it did. */
export function answerKernel(
  model: AnyModel<WidgetModel>,
  index: GraphIndex,
  shown: () => ViewState,
  fold = false,
): boolean {
  const answer = answerRequest(index, model.get("_request"), model.get("_resolved"), shown, fold);
  if (answer === null) return false;
  // Always sent, even when the model holds these values already (the kernel's own guess):
  // an older answer of ours may still be on its way and must not have the last word.
  model.set("expanded", []);
  model.set("depth", -2);
  model.set("depth", answer.depth);
  model.set("expanded", answer.expanded);
  lastAnswer.set(model, JSON.stringify(answer._resolved)); // before its change is seen
  model.set("_resolved", answer._resolved);
  model.save_changes();
  return true;
}
