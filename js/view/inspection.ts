// What the inspector panel shows of a node, edge or group: the plain data ./describe.ts and its
// helpers (describe_run.ts, describe_stats.ts, diff.ts) build and js/ui/inspector.ts renders.
// Types only, in a module of their own so that those helpers need not import describe.ts.

export interface InfoItem {
  label: string;
  value: string;
  /** Payload id to select when the item is clicked. */
  ref?: string;
  /** Longer text shown on hover (e.g. a full file path). */
  hint?: string;
  /** Norms over the kept steps (trace(steps=K)), drawn as a sparkline. */
  spark?: { values: (number | null)[]; steps: number[] };
  /** A click does this to the run `ref` instead of selecting it (describe_run.ts). */
  action?: "unfold" | "fold";
}

export interface InfoSection {
  title: string;
  items: InfoItem[];
}

export interface Inspection {
  kind: "node" | "edge" | "group" | "overview";
  id: string;
  title: string;
  subtitle: string;
  sections: InfoSection[];
}
