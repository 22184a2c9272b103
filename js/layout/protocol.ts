// Messages between the main thread (client.ts) and the layout worker (worker.ts).

export interface LayoutRequest {
  id: number;
  dot: string;
}

export type LayoutReply =
  | { id: number; ok: true; svg: string; ms: number; version: string }
  | { id: number; ok: false; error: string; name: string };
