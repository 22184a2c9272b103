// Test-only: the repeated-block fixtures (tests/fixtures/graphs/make_repeat_fixtures.py, real
// Paddle models), and plain readings of a payload that the fold tests check the view against.
import llamaJson from "../../tests/fixtures/graphs/repeats/llama_tiny.json";
import resnet50Json from "../../tests/fixtures/graphs/repeats/resnet50.json";
import unevenJson from "../../tests/fixtures/graphs/repeats/uneven.json";
import { decodePayload } from "./payload";
import { FIXTURES } from "./test_fixtures";
import type { GraphGroup, GraphPayload } from "./types";

/** Real models with repeated blocks, decoded; plus the shared fixtures (ResNet-18, ...). */
export const REPEAT_FIXTURES: Record<string, GraphPayload> = {
  llama_tiny: decodePayload(llamaJson),
  resnet50: decodePayload(resnet50Json),
  uneven: decodePayload(unevenJson),
  ...FIXTURES,
};

export function repeatFixture(name: string): GraphPayload {
  return JSON.parse(JSON.stringify(REPEAT_FIXTURES[name])) as GraphPayload;
}

export function groupNamed(graph: GraphPayload, name: string): GraphGroup {
  const group = graph.groups.find((g) => g.name === name);
  if (!group) throw new Error(`no group ${name}`);
  return group;
}

/** Ids of the groups named `<prefix>.<k>`, k = 0, 1, ..., straight from the JSON. */
export function indexedGroups(graph: GraphPayload, prefix: string): string[] {
  const re = new RegExp(`^${prefix.replace(/\./g, "\\.")}\\.(\\d+)$`);
  return graph.groups
    .filter((g) => re.test(g.name))
    .sort((a, b) => Number(re.exec(a.name)?.[1]) - Number(re.exec(b.name)?.[1]))
    .map((g) => g.id);
}

/** Payload node ids inside group `gid` at any depth, from the JSON parent links. */
export function nodesInside(graph: GraphPayload, gid: string): Set<string> {
  const parent = new Map(graph.groups.map((g) => [g.id, g.parent] as const));
  const inside = (g: string | null | undefined): boolean => {
    for (let cur = g ?? null; cur; cur = parent.get(cur) ?? null) if (cur === gid) return true;
    return false;
  };
  return new Set(graph.nodes.filter((n) => inside(n.group)).map((n) => n.id));
}
