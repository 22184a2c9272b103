// Short human-readable text for shapes, gradients and layers, shared by labels, tooltips and
// the inspector.
import type { GradInfo, GraphGroup, Shape } from "./types";

export function formatShape(shape: Shape | undefined): string {
  return shape ? `[${shape.join(", ")}]` : "[?]";
}

/** "float32[1, 10]" - compact, for labels. */
export function formatGrad(grad: GradInfo | null | undefined): string {
  if (!grad) return "";
  return `${grad.dtype ?? "?"}${formatShape(grad.shape)}`;
}

/** "float32[1, 10] · cpu" - with the place, for tooltips and the inspector. */
export function formatGradFull(grad: GradInfo | null | undefined): string {
  if (!grad) return "no gradient information";
  return `${formatGrad(grad)} \u00b7 ${grad.place ?? "?"}`;
}

/** "MatmulGradNode" -> "Matmul": the suffix repeats on every node and costs width. */
export function shortOpName(name: string): string {
  const trimmed = name.replace(/GradNode(Final)?$/, "");
  return trimmed.length > 0 ? trimmed : name;
}

/** "conv.0 · Conv2D" */
export function groupTitle(group: GraphGroup): string {
  return group.name && group.name !== group.type ? `${group.name} \u00b7 ${group.type}` : group.type;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** "3 ops · 2 params" */
export function countsText(ops: number, params: number): string {
  return params > 0 ? `${plural(ops, "op")} \u00b7 ${plural(params, "param")}` : plural(ops, "op");
}

/** Distinct formatted gradients with their multiplicity: ["float32[1, 84] ×2", ...]. */
export function gradSummary(grads: Array<GradInfo | null | undefined>): string[] {
  const counts = new Map<string, number>();
  for (const g of grads) {
    const text = g ? formatGrad(g) : "?";
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].map(([text, n]) => (n > 1 ? `${text} \u00d7${n}` : text));
}
