// A compiled program's backward ops (paddle.jit.to_static) sit in a group of this type inside
// the program node's layer group (tracer/merge/program_ops.py). It opens like a layer group, but
// only when asked: a depth never opens it, since its ops are a second account of one GradNode.
import type { GraphGroup } from "./types";

export const PROGRAM_GROUP_TYPE = "to_static program";

export function isProgramGroup(group: GraphGroup | undefined): boolean {
  return group?.type === PROGRAM_GROUP_TYPE;
}
