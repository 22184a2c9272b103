// Test-only: the LeNet fixture with the hostile names of tests/fixtures/hostile_names.json (the
// ones the Python and browser tests use) as layer paths, layer classes, parameter and op names,
// and a reader for the text Graphviz wrote into its SVG.
import names from "../../tests/fixtures/hostile_names.json";
import { fixture } from "./test_fixtures";
import type { GraphPayload } from "./types";

export const HOSTILE = names as { layers: string[]; class: string; param: string };

/** Every group renamed (layers in turn, every other one of the hostile class), parameters
 * named after their layer (one after HOSTILE.param), and one op after the class. */
export function hostileGraph(): GraphPayload {
  const graph = fixture("lenet");
  const renamed = new Map<string, string>();
  graph.groups.forEach((g, i) => {
    g.name = HOSTILE.layers[i % HOSTILE.layers.length];
    if (i % 2 === 1) g.type = HOSTILE.class;
    renamed.set(g.id, g.name);
  });
  let first = true;
  for (const node of graph.nodes) {
    if (node.param) {
      node.param.name = first ? HOSTILE.param : `${renamed.get(node.group ?? "") ?? "?"}.weight`;
      first = false;
    }
  }
  const op = graph.nodes.find((n) => n.kind === "op");
  if (op) op.name = `${HOSTILE.class}GradNode`;
  return graph;
}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** XML text (or attribute value) to the string it stands for. */
export function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
    if (ref[0] !== "#") return ENTITIES[ref] ?? whole;
    return String.fromCodePoint(ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : Number(ref.slice(1)));
  });
}

/** The lines of text Graphviz drew in each <g> with an id, by (decoded) id. */
export function svgTexts(svg: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  // Up to the next <g> or </g>: the graph's own <g> holds all the others.
  for (const m of svg.matchAll(/<g id="([^"]*)"[^>]*>((?:(?!<g[ >]|<\/g>)[\s\S])*)/g)) {
    const lines = [...m[2].matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((t) => decodeXml(t[1]));
    out.set(decodeXml(m[1]), lines);
  }
  return out;
}
