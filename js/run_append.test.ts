// The page's side of a refresh's appended steps (run_append.ts): when to join, and the join.
import { describe, expect, it } from "vitest";
import { appendAction, joinBytes } from "./run_append";

describe("appendAction", () => {
  it("joins steps that start where the model ends", () => {
    expect(appendAction(100, 100, 25)).toBe("join");
  });
  it("takes the second view's copy of the message as joined already", () => {
    expect(appendAction(125, 100, 25)).toBe("joined");
  });
  it("asks for the whole state when the model missed a message or has another run", () => {
    expect(appendAction(90, 100, 25)).toBe("resend");
    expect(appendAction(130, 100, 25)).toBe("resend");
  });
});

describe("joinBytes", () => {
  it("puts the tail after the head, from any view of the bytes", () => {
    const head = new Float64Array([0, 1, 2]);
    const backing = new Uint8Array(8 * 4);
    const tail = new DataView(backing.buffer, 8, 16); // an offset view, as a message's buffer
    tail.setFloat64(0, 3, true);
    tail.setFloat64(8, 4, true);
    const joined = joinBytes(new DataView(head.buffer), tail);
    expect(Array.from(new Float64Array(joined.buffer, joined.byteOffset, joined.byteLength / 8))).toEqual([
      0, 1, 2, 3, 4,
    ]);
    expect(joinBytes(undefined, new Uint8Array([7])).length).toBe(1);
  });
});

describe("joinBytes in place", () => {
  const f64 = (u: Uint8Array): number[] => Array.from(new Float64Array(u.buffer, u.byteOffset, u.byteLength / 8));
  it("appends into the room its last join left, the bytes before untouched", () => {
    const first = joinBytes(new Float64Array([0, 1]), new Float64Array([2]));
    const second = joinBytes(first, new Float64Array([3, 4]));
    expect(second.buffer).toBe(first.buffer); // no copy of the run
    expect(f64(first)).toEqual([0, 1, 2]); // the model's previous value reads as before
    expect(f64(second)).toEqual([0, 1, 2, 3, 4]);
  });
  it("never writes over bytes a later join took (an old head gets a new buffer)", () => {
    const first = joinBytes(new Float64Array([0]), new Float64Array([1]));
    const second = joinBytes(first, new Float64Array([2]));
    const again = joinBytes(first, new Float64Array([9]));
    expect(again.buffer).not.toBe(first.buffer);
    expect(f64(second)).toEqual([0, 1, 2]);
    expect(f64(again)).toEqual([0, 1, 9]);
  });
  it("grows past its room", () => {
    let joined = joinBytes(undefined, new Float64Array([0]));
    const want = [0];
    for (let k = 1; k < 2000; k++) {
      joined = joinBytes(joined, new Float64Array([k]));
      want.push(k);
    }
    expect(f64(joined)).toEqual(want);
  });
});
