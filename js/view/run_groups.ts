// Heatmap rows (layer paths) <-> the layer groups of a step's graph, both ways: a row selects
// its group in the graph, and whatever is selected in the graph (group, node, edge) lights the
// row of the innermost layer around it that the run has a row for. Pure.

interface GroupLike {
  id: string;
  name: string;
  parent?: string;
}

export interface LayerLinks {
  /** Group id of a layer path (its first call's group), or undefined. */
  groupOf(layer: string): string | undefined;
  /** Groups enclosing group `gid`, outermost first (to open so that it shows). */
  ancestors(gid: string): string[];
  /** The heatmap row's layer path for a selected id, or "". */
  layerOf(id: string): string;
}

export function layerLinks(doc: unknown, layers: string[]): LayerLinks {
  const d = (doc ?? {}) as {
    groups?: GroupLike[];
    nodes?: { id: string; group?: string }[];
    edges?: { id: string; source?: string; target?: string }[];
  };
  const groups = new Map<string, GroupLike>();
  const byName = new Map<string, string>();
  for (const raw of d.groups ?? []) {
    if (!raw || typeof raw.id !== "string") continue;
    // The model's own group (no parent) is the row of its own parameters, layer path "".
    const g = raw.parent === undefined ? { ...raw, name: "" } : raw;
    groups.set(g.id, g);
    if (!byName.has(g.name)) byName.set(g.name, g.id);
  }
  const nodeGroup = new Map<string, string>();
  for (const n of d.nodes ?? []) if (n?.group) nodeGroup.set(n.id, n.group);
  const edgeTarget = new Map<string, string>();
  for (const e of d.edges ?? []) if (e && typeof e.target === "string") edgeTarget.set(e.id, e.target);
  const rows = new Set(layers);

  const ancestors = (gid: string): string[] => {
    const chain: string[] = [];
    let cur = groups.get(gid)?.parent;
    while (cur !== undefined && groups.has(cur) && !chain.includes(cur) && cur !== gid) {
      chain.unshift(cur);
      cur = groups.get(cur)?.parent;
    }
    return chain;
  };
  const layerOfGroup = (gid: string | undefined): string => {
    const seen = new Set<string>();
    while (gid !== undefined && !seen.has(gid)) {
      seen.add(gid);
      const g = groups.get(gid);
      if (!g) return "";
      if (rows.has(g.name)) return g.name;
      gid = g.parent;
    }
    return "";
  };
  return {
    groupOf: (layer) => byName.get(layer),
    ancestors,
    layerOf(id) {
      if (!id) return "";
      if (groups.has(id)) return layerOfGroup(id);
      const node = nodeGroup.has(id) ? id : edgeTarget.get(id);
      // An edge runs into the node that uses its gradient: its layer is that node's.
      return node !== undefined ? layerOfGroup(nodeGroup.get(node)) : "";
    },
  };
}
