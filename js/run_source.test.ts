import { describe, expect, it } from "vitest";
import { diffFromReply, pageSource } from "./run_source";

const bytes = (value: unknown): DataView => new DataView(new TextEncoder().encode(JSON.stringify(value)).buffer);

describe("a cross-rank finding's graph difference", () => {
  it("comes from the kernel's reply: its JSON in the second buffer, or the error", () => {
    const got = diffFromReply({ captured: true, title: "Graph difference at step 0", layer_rows: { rows: [] } }, [
      new ArrayBuffer(0),
      bytes({ nodes: [] }),
    ]);
    expect(got.title).toBe("Graph difference at step 0");
    expect(JSON.parse(new TextDecoder().decode(got.graph as DataView))).toEqual({ nodes: [] });
    expect(diffFromReply({ error: "no graph difference: none captured" }, []).error).toContain("none captured");
    expect(diffFromReply({}, []).error).toBe("The graph difference did not arrive.");
  });

  it("comes from a saved page's embedded ones, by finding index", async () => {
    const source = pageSource({
      steps: new Float64Array([0]),
      summaries: new Float32Array(4),
      graphs: {},
      diffs: { "1": { graph: { nodes: [1] }, layer_rows: null, title: "t" }, "2": { error: "no graph difference: x" } },
    });
    const fetchDiff = source.fetchDiff as (k: number) => Promise<{ graph: DataView | null; error?: string }>;
    const one = await fetchDiff(1);
    expect(JSON.parse(new TextDecoder().decode(one.graph as DataView))).toEqual({ nodes: [1] });
    expect((await fetchDiff(2)).error).toBe("no graph difference: x");
    expect((await fetchDiff(0)).error).toBe("No graph difference in this page.");
  });
});
