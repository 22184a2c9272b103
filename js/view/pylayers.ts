// What a PyLayer node stands for, as the tracer keeps it in meta.pylayers: the PyLayer class,
// for recompute the layer it recomputes, and the parameters whose GradNodes it hides (their
// backward runs inside that one node). Pure: returns inspector sections; entries not in that
// shape are skipped, never thrown on.
import { formatShape } from "./format";
import type { GraphPayload } from "./types";

export interface PyLayerFacts {
  cls: string;
  layer?: string;
  layerType?: string;
  hidden: { name: string; shape: number[] | null; dtype: string | null }[];
}

interface Item {
  label: string;
  value: string;
}

const cache = new WeakMap<object, Map<string, PyLayerFacts>>();
const SHOWN = 12;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function read(entries: unknown): Map<string, PyLayerFacts> {
  const table = new Map<string, PyLayerFacts>();
  if (!Array.isArray(entries)) return table;
  for (const entry of entries) {
    if (!isRecord(entry) || typeof entry.node !== "string") continue;
    const hidden = (Array.isArray(entry.hidden_params) ? entry.hidden_params : [])
      .filter(isRecord)
      .filter((p) => typeof p.name === "string")
      .map((p) => ({
        name: p.name as string,
        shape: Array.isArray(p.shape) ? (p.shape as number[]) : null,
        dtype: typeof p.dtype === "string" ? p.dtype : null,
      }));
    table.set(entry.node, {
      cls: typeof entry.class === "string" ? entry.class : "PyLayer",
      layer: typeof entry.layer === "string" ? entry.layer : undefined,
      layerType: typeof entry.layer_type === "string" ? entry.layer_type : undefined,
      hidden,
    });
  }
  return table;
}

/** The PyLayer facts of node ``id``, or undefined. */
export function pyLayerFacts(graph: GraphPayload, id: string): PyLayerFacts | undefined {
  const meta = graph.meta ?? {};
  let table = cache.get(meta);
  if (!table) {
    table = read(meta.pylayers);
    cache.set(meta, table);
  }
  return table.get(id);
}

/** Inspector sections for a PyLayer node: what it recomputes and what it hides. */
export function pyLayerSections(graph: GraphPayload, id: string): { title: string; items: Item[] }[] {
  const facts = pyLayerFacts(graph, id);
  if (!facts) return [];
  const about: Item[] = [{ label: "PyLayer", value: facts.cls }];
  if (facts.layer)
    about.push({
      label: "recomputes",
      value: facts.layerType ? `${facts.layer} \u00b7 ${facts.layerType}` : facts.layer,
    });
  const sections = [{ title: "Python backward", items: about }];
  if (facts.hidden.length > 0) {
    const items = facts.hidden.slice(0, SHOWN).map((p) => ({
      label: p.name,
      value: `${formatShape(p.shape ?? undefined)}${p.dtype ? ` ${p.dtype}` : ""}`,
    }));
    if (facts.hidden.length > SHOWN) items.push({ label: "\u2026", value: `${facts.hidden.length - SHOWN} more` });
    sections.push({ title: `Hidden parameters (${facts.hidden.length})`, items });
  }
  return sections;
}

/** Every one-line notice of the graph: meta.notices, else meta.notice. */
export function noticeLines(graph: GraphPayload): string[] {
  const meta = graph.meta ?? {};
  if (Array.isArray(meta.notices))
    return meta.notices.filter((n): n is string => typeof n === "string" && n.length > 0);
  return typeof meta.notice === "string" && meta.notice ? [meta.notice] : [];
}
