import { describe, expect, it } from "vitest";
import { readTable } from "./layer_rows";

const row = (extra: Record<string, unknown> = {}) => ({
  group: "g2",
  name: "fc.0",
  type: "Linear",
  depth: 1,
  params: 69_240,
  trainable: 69_240,
  grad_nodes: 2,
  grads_in: ["float32[1, 120]"],
  grads_out: ["float32[1, 576]"],
  ...extra,
});

describe("the kernel's layer rows", () => {
  it("are taken as they come, names and all", () => {
    const hostile = '<img src=x onerror="alert(1)"> & \\N';
    const table = readTable({
      type: "pvw-layer-rows",
      id: 1,
      rows: [row(), row({ name: hostile })],
      total_params: 81_302,
      trainable_params: 81_292,
    });
    expect(table).toEqual({
      rows: [row(), row({ name: hostile })],
      total: 81_302,
      trainable: 81_292,
      note: null,
      counting: ", counting the parameters in this graph", // a kernel from before `counting`
    });
  });

  it("carry the footer's words on what the counts leave out", () => {
    const answer = { rows: [row()], total_params: 10, trainable_params: 7 };
    expect(readTable({ ...answer, counting: "" })).toMatchObject({ counting: "" });
    const some = ", counting the parameters in this graph and those it names; some are left out";
    expect(readTable({ ...answer, counting: some })).toMatchObject({ counting: some });
  });

  it("an error or a malformed answer gives one line saying why", () => {
    expect(readTable({ error: "the layer table could not be made: bad doc" })).toBe(
      "No layer table: the layer table could not be made: bad doc",
    );
    for (const bad of [
      null,
      3,
      {},
      { rows: [row()] },
      { rows: [row({ params: "12" })], total_params: 1, trainable_params: 1 },
      { rows: [row({ grads_in: [1] })], total_params: 1, trainable_params: 1 },
      { rows: "x", total_params: 1, trainable_params: 1 },
    ]) {
      expect(readTable(bad)).toBe("No layer table: the kernel's answer could not be read.");
    }
  });
});
