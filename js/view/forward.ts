// The two readings of one graph. "backward" draws it as recorded: a GradNode per node, an edge
// A -> B where A sends a gradient to B. "forward" draws the computation the model ran: the
// forward op each GradNode differentiates, arrows from inputs to outputs (B's op -> A's op),
// parameters as inputs and the output at the end. Only names and directions change: ids,
// groups, selection and colours are the same in both. Pure; unit-tested with vitest.
import { shortOpName } from "./format";
import type { GraphPayload } from "./types";

export type Reading = "backward" | "forward";

export const READINGS: readonly Reading[] = ["backward", "forward"];

export function isReading(value: unknown): value is Reading {
  return value === "backward" || value === "forward";
}

/** Nodes that stand for no forward op of their own name (the name is no op's). */
const SPECIAL: Record<string, string | null> = {
  GradNodeAccumulation: null, // a leaf (parameter or input): drawn by its name, not an op
  Dy2StGradNode: "run_program", // a to_static program (paddle.jit): Paddle runs it as run_program
};

/** "SoftmaxWithCrossEntropy" -> "softmax_with_cross_entropy", "Conv2d" -> "conv2d",
 * "AddN" -> "add_n": the inverse of how Paddle's code generator names GradNode classes (each
 * "_"-separated word of the backward op's name capitalised and joined). */
function snakeCase(camel: string): string {
  return camel.replace(/(?!^)[A-Z]/g, (c) => `_${c}`).toLowerCase();
}

/** A double (triple) backward node differentiates the backward op itself: matmul_grad. */
function higherOrder(op: string): string {
  if (op.endsWith("_double")) return `${op.slice(0, -"_double".length)}_grad`;
  if (op.endsWith("_triple")) return `${op.slice(0, -"_triple".length)}_double_grad`;
  return op;
}

/**
 * The forward op a GradNode differentiates, from the GradNode's name, or null when the name
 * does not say it unambiguously. Paddle names its GradNodes in four ways:
 * - generated and manual nodes: "MatmulGradNode", "Conv2dGradNodeFinal" (matmul, conv2d);
 * - with GLOG_v set before import (Paddle 3.3): the forward API's name and a call counter,
 *   "matmul2GradNode", "conv2d1GradNode". With more than one digit the split is not known
 *   ("relu612": relu6 or relu?), and the answer is null;
 * - legacy fluid ops: "fused_gate_attentionGradNodeCompat";
 * - runtime nodes: "GradNodePyLayer_RecomputeFunction" (a PyLayer: its class),
 *   "GradNodeRunProgram" (run_program), "GradNodeAccumulation" (a leaf: null).
 */
export function forwardOpName(gradNode: string): string | null {
  if (gradNode in SPECIAL) return SPECIAL[gradNode];
  const pyLayer = /^GradNodePyLayer_(.+)$/.exec(gradNode);
  if (pyLayer) return pyLayer[1];
  const runtime = /^GradNode([A-Z][A-Za-z0-9]*)$/.exec(gradNode);
  if (runtime) return snakeCase(runtime[1]);
  const generated = /^([A-Z][A-Za-z0-9]*?)GradNode(?:Final)?$/.exec(gradNode);
  if (generated) return higherOrder(snakeCase(generated[1]));
  const compat = /^([a-z][a-z0-9_]*)GradNodeCompat$/.exec(gradNode);
  if (compat) return compat[1];
  const counted = /^([a-z][a-z0-9_]*[a-z_])[1-9]GradNode$/.exec(gradNode);
  return counted ? counted[1] : null;
}

/** An op node's title: "Matmul" read backward, "matmul" read forward (the GradNode's full name
 * when its forward op cannot be told, so that no op is named wrongly). */
export function opTitle(gradNode: string, reading: Reading = "backward"): string {
  return reading === "forward" ? (forwardOpName(gradNode) ?? gradNode) : shortOpName(gradNode);
}

/** Whether a graph can be read forward: a GradNode graph, not one whose edges already follow
 * the data (Jittor's, forward and backward ops together). */
export function readsForward(graph: GraphPayload): boolean {
  return graph.meta?.source !== "jittor";
}

/** The reading a graph is drawn in when `wanted` is asked for (anything unknown: backward). */
export function readingFor(graph: GraphPayload, wanted: unknown): Reading {
  return wanted === "forward" && readsForward(graph) ? "forward" : "backward";
}

/** The ends of a (payload or drawn) edge as shown: tail -> head. */
export function shownEnds(
  edge: { source: string; target: string },
  reading: Reading = "backward",
): { from: string; to: string } {
  return reading === "forward" ? { from: edge.target, to: edge.source } : { from: edge.source, to: edge.target };
}

/** What an edge carries, in words: the gradient (backward) or the forward tensor, which has
 * the gradient's dtype and shape. */
export function carried(reading: Reading = "backward"): "gradient" | "tensor" {
  return reading === "forward" ? "tensor" : "gradient";
}
