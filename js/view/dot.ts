// Pure graph -> DOT text. No DOM, no Graphviz: unit-tested with vitest.
import { formatGrad, formatShape, shortOpName } from "./format";
import type { GraphEdge, GraphNode, GraphPayload } from "./types";

export type RankDir = "TB" | "LR" | "BT" | "RL";

export interface DotOptions {
  rankdir: RankDir;
  edgeLabels: boolean;
}

export const DEFAULT_DOT_OPTIONS: DotOptions = { rankdir: "TB", edgeLabels: false };

/** Quote a string for DOT, escaping what would end or break the quoted id. */
export function dotString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export function nodeLabel(node: GraphNode): string {
  if (node.kind === "param") {
    const title = node.param?.name ?? "leaf";
    return node.param?.shape ? `${title}\n${formatShape(node.param.shape)}` : title;
  }
  const title = shortOpName(node.name);
  return node.tensor ? `${title}\n${formatGrad(node.tensor)}` : title;
}

const NODE_STYLE: Record<GraphNode["kind"], string> = {
  op: 'shape=box style="rounded,filled" class="pvw-op"',
  param: 'shape=ellipse style=filled class="pvw-param"',
  output: 'shape=box style="rounded,filled,bold" class="pvw-output"',
};

function nodeLine(node: GraphNode): string {
  return `  ${node.id} [id=${dotString(`pvw-${node.id}`)} label=${dotString(nodeLabel(node))} ${NODE_STYLE[node.kind]}];`;
}

function edgeLine(edge: GraphEdge, options: DotOptions): string {
  const label = options.edgeLabels && edge.grad ? ` label=${dotString(formatGrad(edge.grad))}` : "";
  return `  ${edge.source} -> ${edge.target} [id=${dotString(`pvw-${edge.id}`)}${label}];`;
}

export function graphToDot(graph: GraphPayload, options: DotOptions = DEFAULT_DOT_OPTIONS): string {
  const lines = [
    "digraph backward {",
    `  graph [rankdir=${options.rankdir} nodesep=0.25 ranksep=0.35 bgcolor=transparent];`,
    '  node [fontname="Helvetica" fontsize=11 margin="0.12,0.04" height=0.3];',
    '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.6];',
    ...graph.nodes.map(nodeLine),
    ...graph.edges.map((e) => edgeLine(e, options)),
    "}",
  ];
  return lines.join("\n");
}
