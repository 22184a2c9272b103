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
    expect(Array.from(new Float64Array(joined.buffer))).toEqual([0, 1, 2, 3, 4]);
    expect(joinBytes(undefined, new Uint8Array([7])).length).toBe(1);
  });
});
