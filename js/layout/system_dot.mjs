// The system's Graphviz `dot` (native), for tests that check a DOT lays out (typed in
// system_dot.d.mts: the TS project has no Node types).
import { execFileSync } from "node:child_process";

export function systemDotSvg(dot) {
  return execFileSync("dot", ["-Tsvg"], { input: dot, encoding: "utf8" });
}
