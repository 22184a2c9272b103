// Small DOTs shaped like the explorer's, laid out when the worker has loaded Graphviz and no
// layout is waiting: the WASM is compiled lazily, function by function, on first call, and
// this moves most of that out of the first real layout. Two of them, each its own task, so
// that a layout asked for meanwhile waits for one part at most: the first, three boxes and
// edges (most of the compile: parse, ranks, crossings, positions, splines, SVG), then one
// with nested clusters, HTML-like and multi-line labels, boxes and ellipses, merged and
// minlen=0 edges and an edge label.
export const WARM_UP_CORE = `digraph core {
  node [fontname="Helvetica" fontsize=12 shape=box style="rounded,filled"];
  "a" -> "b" [label="float32[1, 8]"];
  "b" -> "c";
  "a" -> "c";
}`;
export const WARM_UP_DOT = `digraph warm {
  graph [rankdir=TB nodesep=0.25 ranksep=0.3 bgcolor=transparent fontname="Helvetica" fontsize=11 labeljust=l style=rounded];
  node [fontname="Helvetica" fontsize=12 margin="0.1,0.04" height=0.3];
  edge [fontname="Helvetica" fontsize=9 arrowsize=0.6];
  subgraph "cluster_a" {
    graph [id="w-a" class="pvw-cluster" label="\u25be Model"];
    "o" [id="w-o" class="pvw-output" label="Add\\nfloat32[1, 10]" shape=box style="rounded,filled,bold"];
    "p" [id="w-p" class="pvw-param" label="fc.bias\\n[10]" shape=ellipse style=filled];
    subgraph "cluster_b" {
      graph [id="w-b" class="pvw-cluster" label="\u25be layer \u00b7 Sequential"];
      "g1" [id="w-g1" class="pvw-group" label=<<B>layer.0 \u00b7 Block</B><BR/>12 ops \u00b7 9 params> shape=box style=filled peripheries=2 margin="0.14,0.06"];
      "g2" [id="w-g2" class="pvw-group" label=<<B>layer.1 \u00b7 Block</B><BR/>10 ops> shape=box style=filled peripheries=2 margin="0.14,0.06"];
      "m" [id="w-m" class="pvw-op" label="Matmul" shape=box style="rounded,filled"];
    }
  }
  "x" [id="w-x" class="pvw-op" label="Relu" shape=box style="rounded,filled"];
  "o" -> "m" [id="w-e0" class="pvw-single" label="float32[1, 84]"];
  "o" -> "p" [id="w-e1" class="pvw-single" minlen=0];
  "m" -> "g2" [id="w-e2" class="pvw-single"];
  "g2" -> "g1" [id="w-e3" class="pvw-merged" penwidth=1.6];
  "g1" -> "x" [id="w-e4" class="pvw-merged" penwidth=1.6];
  "m" -> "x" [id="w-e5" class="pvw-single"];
}`;

export const WARM_UP_DOTS: readonly string[] = [WARM_UP_CORE, WARM_UP_DOT];

/** A DOT the size of a default view (~100 nodes: `blocks` clusters of ops, parameters and
 * labelled edges, a skip edge around each block), laid out a few times once the worker has
 * sat idle after loading: the two small DOTs above compile Graphviz's code, but its hot
 * functions (ranks, crossings, positions, splines) run in WebAssembly's baseline tier until
 * a layout of some size has run them often; a page's first 113-node layout took Graphviz
 * ~1.8x a later one's time (benchmarks/RESULTS.md, round 17). */
export function warmUpLargeDot(blocks = 8, opsPerBlock = 8): string {
  const lines = [
    "digraph large {",
    '  graph [rankdir=TB nodesep=0.25 ranksep=0.3 bgcolor=transparent fontname="Helvetica" fontsize=11 labeljust=l style=rounded];',
    '  node [fontname="Helvetica" fontsize=12 margin="0.1,0.04" height=0.3 shape=box style="rounded,filled"];',
    '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.6];',
  ];
  let previous = "in";
  lines.push('  "in" [label="Add\\nfloat32[1, 10]" style="rounded,filled,bold"];');
  for (let b = 0; b < blocks; b++) {
    lines.push(`  subgraph "cluster_${b}" {`, `    graph [label="\u25be blocks.${b} \u00b7 Block"];`);
    for (let k = 0; k < opsPerBlock; k++) {
      const id = `b${b}o${k}`;
      const param = k % 3 === 1;
      const label = param ? `blocks.${b}.fc${k}.weight\\n[64, 64]` : `Matmul${k}\\nfloat32[2, 64]`;
      lines.push(`    "${id}" [label="${label}"${param ? " shape=ellipse style=filled" : ""}];`);
    }
    lines.push("  }");
    for (let k = 0; k < opsPerBlock; k++) {
      const from = k === 0 ? previous : `b${b}o${k - 1}`;
      lines.push(`  "${from}" -> "b${b}o${k}" [label="float32[2, ${16 * (k + 1)}]"];`);
      if (k >= 2 && k % 2 === 0) lines.push(`  "b${b}o${k - 2}" -> "b${b}o${k}" [minlen=0];`);
    }
    lines.push(`  "${previous}" -> "b${b}o${opsPerBlock - 1}" [penwidth=1.6];`);
    previous = `b${b}o${opsPerBlock - 1}`;
  }
  lines.push("}");
  return lines.join("\n");
}
