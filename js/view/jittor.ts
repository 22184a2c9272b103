// Jittor facts the graph schema has no field for, which paddleviz_widget/sources/jittor.py keeps
// in meta.jittor: the forward op each backward op differentiates (grad_of) and the execution
// groups each op ran in (executions: Jittor's execute_op_info, fused kernels included). Pure:
// returns inspector items; entries that are not in that shape are skipped, never thrown on.
import type { GraphPayload } from "./types";

export interface JittorExecution {
  key: number;
  jit_key: string;
  ops: string[];
  file_path?: string;
}

export interface JittorFacts {
  /** Backward op id -> the forward op id it differentiates. */
  gradOf: ReadonlyMap<string, string>;
  /** Forward op id -> its backward op ids. */
  gradsOf: ReadonlyMap<string, string[]>;
  /** Op id -> the executions it is part of, in execution order. */
  runs: ReadonlyMap<string, JittorExecution[]>;
}

export interface FactItem {
  label: string;
  value: string;
  ref?: string;
  hint?: string;
}

const SHOWN = 6; // runs and fused peers listed per node before "… n more"
const cache = new WeakMap<object, JittorFacts | null>();

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function read(jt: Record<string, unknown>): JittorFacts {
  const gradOf = new Map<string, string>();
  const gradsOf = new Map<string, string[]>();
  if (isRecord(jt.grad_of)) {
    for (const [bwd, fwd] of Object.entries(jt.grad_of)) {
      if (typeof fwd !== "string") continue;
      gradOf.set(bwd, fwd);
      const list = gradsOf.get(fwd);
      if (list) list.push(bwd);
      else gradsOf.set(fwd, [bwd]);
    }
  }
  const runs = new Map<string, JittorExecution[]>();
  for (const run of Array.isArray(jt.executions) ? jt.executions : []) {
    if (!isRecord(run) || !Array.isArray(run.ops)) continue;
    const ops = run.ops.filter((op): op is string => typeof op === "string");
    const entry: JittorExecution = {
      key: typeof run.key === "number" ? run.key : -1,
      jit_key: typeof run.jit_key === "string" ? run.jit_key : "",
      ops,
      ...(typeof run.file_path === "string" ? { file_path: run.file_path } : {}),
    };
    for (const op of new Set(ops)) {
      const list = runs.get(op);
      if (list) list.push(entry);
      else runs.set(op, [entry]);
    }
  }
  return { gradOf, gradsOf, runs };
}

/** The Jittor facts of a graph, or null for a graph that did not come from Jittor. */
export function jittorFacts(graph: GraphPayload): JittorFacts | null {
  const meta = graph.meta;
  if (meta?.source !== "jittor" || !isRecord(meta.jittor)) return null;
  let facts = cache.get(meta);
  if (facts === undefined) {
    facts = read(meta.jittor);
    cache.set(meta, facts);
  }
  return facts;
}

/** A jit_key short enough for one inspector row; the full key goes in the hover text. */
export function shortJitKey(key: string, max = 48): string {
  if (key.length === 0) return "(no jit key)";
  return key.length <= max ? key : `${key.slice(0, max - 1)}\u2026`;
}

function more(items: FactItem[], total: number): FactItem[] {
  return total > items.length ? [...items, { label: "\u2026", value: `${total - items.length} more` }] : items;
}

/** "Gradient" and "Execution" sections for node `id`, titles of other nodes from `title`. */
export function jittorSections(
  graph: GraphPayload,
  id: string,
  title: (id: string) => string,
): { title: string; items: FactItem[] }[] {
  const facts = jittorFacts(graph);
  if (!facts) return [];
  const sections: { title: string; items: FactItem[] }[] = [];
  const fwd = facts.gradOf.get(id);
  const bwds = facts.gradsOf.get(id) ?? [];
  const grad: FactItem[] = [];
  if (fwd) grad.push({ label: "backward of", value: title(fwd), ref: fwd });
  const listed = bwds.slice(0, SHOWN).map((b) => ({ label: "backward op", value: title(b), ref: b }));
  grad.push(...more(listed, bwds.length));
  if (grad.length > 0) sections.push({ title: "Gradient", items: grad });

  const runs = facts.runs.get(id) ?? [];
  const execution: FactItem[] = [];
  for (const run of runs.slice(0, SHOWN)) {
    const fused = run.ops.length > 1;
    const hint = [run.jit_key, run.file_path].filter(Boolean).join("\n");
    execution.push({
      label: fused ? "fused in" : "ran as",
      value: `${shortJitKey(run.jit_key)} with ${run.ops.length} op${run.ops.length === 1 ? "" : "s"}`,
      ...(hint ? { hint } : {}),
    });
    const peers = run.ops.filter((op) => op !== id);
    const shown = peers.slice(0, SHOWN).map((op) => ({ label: "with", value: title(op), ref: op }));
    execution.push(...more(shown, peers.length));
  }
  if (runs.length > SHOWN) execution.push({ label: "\u2026", value: `${runs.length - SHOWN} more runs` });
  if (execution.length > 0) sections.push({ title: "Execution", items: execution });
  return sections;
}

/** One tooltip line for a backward op: "backward of binary.add (n12)". */
export function jittorTooltip(graph: GraphPayload, id: string, title: (id: string) => string): string[] {
  const fwd = jittorFacts(graph)?.gradOf.get(id);
  return fwd ? [`backward of ${title(fwd)} (${fwd})`] : [];
}
