// Short human-readable text for shapes and gradients, shared by labels and tooltips.
import type { GradInfo, Shape } from "./types";

export function formatShape(shape: Shape | undefined): string {
  return shape ? `[${shape.join(", ")}]` : "[?]";
}

export function formatGrad(grad: GradInfo | null | undefined): string {
  if (!grad) return "";
  return `${grad.dtype ?? "?"}${formatShape(grad.shape)}`;
}

/** "MatmulGradNode" -> "Matmul": the suffix repeats on every node and costs width. */
export function shortOpName(name: string): string {
  const trimmed = name.replace(/GradNode(Final)?$/, "");
  return trimmed.length > 0 ? trimmed : name;
}
