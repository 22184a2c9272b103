// Colours as DOT attributes, for a picture drawn without widget.css (the kernel's static
// SVG/PNG: paddleviz_widget/export). The light theme of widget.css, its color-mix() values
// worked out (static_palette.test.ts checks them against the CSS). The explorer does not use
// this: its DOT carries classes and the page's CSS colours them (dark theme included).

/** widget.css's fallback (light) colours. */
export const LIGHT = {
  fg: "#1f2328",
  muted: "#57606a",
  bg: "#ffffff",
  border: "#c4c9cf",
  accent: "#1976d2",
  green: "#388e3c",
  amber: "#f57c00",
  bad: "#d62728",
  /** --pvw-op: fg 8% over bg */
  op: "#ededee",
  /** --pvw-param: green 24% over bg */
  param: "#cfe4d0",
  /** param stroke: green 60% over bg */
  paramStroke: "#88bb8a",
  /** --pvw-output: accent 26% over bg */
  output: "#c3dbf3",
  /** --pvw-group: amber 26% over bg */
  group: "#fcddbd",
  /** --pvw-cluster: fg 4% over transparent (alpha 0x0a) */
  cluster: "#1f23280a",
  /** cluster stroke: amber 55% over border */
  clusterStroke: "#df9f5d",
  /** .pvw-nonfinite fill: bad 22% over bg */
  nonfinite: "#f6cfd0",
  /** A diff of two graphs: --pvw-diff-added (green), -removed, -changed. */
  diffAdded: "#388e3c",
  diffRemoved: "#d62728",
  diffChanged: "#e6a100",
} as const;

type Attrs = Array<[string, string]>;
const q = (colour: string): string => `"${colour}"`;

export interface DotPalette {
  /** Added to the graph, node and edge defaults. */
  graph: Attrs;
  node: Attrs;
  edge: Attrs;
  /** A node by its widget.css classes (view/dot.ts nodeClass, and a diff mark). */
  nodeColours(classes: string): Attrs;
  /** An edge by its diff mark ("pvw-diff-added", ...). */
  edgeColours(mark: string): Attrs;
  cluster: Attrs;
}

/** A node's fill and stroke by its kind (op, param, output, group; badge, NaN/Inf). */
function kindColours(classes: string): Attrs {
  const has = (c: string): boolean => classes.split(" ").includes(c);
  if (has("pvw-badge"))
    return [
      ["fillcolor", q(LIGHT.param)],
      ["color", q(LIGHT.bad)],
      ["penwidth", "2"],
    ];
  if (has("pvw-nonfinite"))
    return [
      ["fillcolor", q(LIGHT.nonfinite)],
      ["color", q(LIGHT.bad)],
      ["penwidth", "2"],
    ];
  // A culprit problems() names: its kind's fill, a red stroke.
  if (has("pvw-problem"))
    return [...kindColours(classes.replace("pvw-problem", "")), ["color", q(LIGHT.bad)], ["penwidth", "2.5"]];
  if (has("pvw-param"))
    return [
      ["fillcolor", q(LIGHT.param)],
      ["color", q(LIGHT.paramStroke)],
    ];
  if (has("pvw-output"))
    return [
      ["fillcolor", q(LIGHT.output)],
      ["color", q(LIGHT.accent)],
    ];
  if (has("pvw-group"))
    return [
      ["fillcolor", q(LIGHT.group)],
      ["color", q(LIGHT.amber)],
    ];
  return [];
}

/** The stroke of a diff mark (GraphWidget.diff), which wins over the kind's, as in widget.css. */
function diffStroke(classes: string, width: { added: string; removed: string; changed: string }): Attrs {
  const has = (c: string): boolean => classes.split(" ").includes(c);
  if (has("pvw-diff-added"))
    return [
      ["color", q(LIGHT.diffAdded)],
      ["penwidth", width.added],
    ];
  if (has("pvw-diff-removed"))
    return [
      ["color", q(LIGHT.diffRemoved)],
      ["penwidth", width.removed],
    ];
  if (has("pvw-diff-changed"))
    return [
      ["color", q(LIGHT.diffChanged)],
      ["penwidth", width.changed],
    ];
  return [];
}

export const STATIC_PALETTE: DotPalette = {
  graph: [
    ["bgcolor", q(LIGHT.bg)],
    ["fontcolor", q(LIGHT.muted)],
  ],
  node: [
    ["color", q(LIGHT.border)],
    ["fontcolor", q(LIGHT.fg)],
    ["fillcolor", q(LIGHT.op)],
  ],
  // Coloured (graded) edges set their own colour, which wins over this default.
  edge: [
    ["color", q(LIGHT.muted)],
    ["fontcolor", q(LIGHT.muted)],
  ],
  nodeColours: (classes) => [
    ...kindColours(classes),
    ...diffStroke(classes, { added: "3", removed: "2.5", changed: "3" }),
  ],
  edgeColours(mark) {
    const stroke = diffStroke(mark, { added: "2.5", removed: "2", changed: "2.5" });
    return mark.split(" ").includes("pvw-diff-removed") ? [...stroke, ["style", "dashed"]] : stroke;
  },
  cluster: [
    ["style", q("rounded,dashed,filled")],
    ["fillcolor", q(LIGHT.cluster)],
    ["color", q(LIGHT.clusterStroke)],
  ],
};
