import { describe, expect, it } from "vitest";
import { executeSplit } from "../../src/runs/nodes/split/split.ts";
import { maxSplitOutputBytes } from "../../src/documents/split/split-plan.ts";

// Review (late): the worker's second check of a split's parts (split.ts, "Checked again here: ...
// one taken over by it may answer anything") sums `part.bytes.length`. The pool's IPC uses the
// advanced serialization, so a taken-over process may send an ArrayBuffer (no `length`: the sum is
// NaN, and NaN > limit is false) or a string (Buffer.from writes UTF-8, up to 3 bytes a unit). Both
// pass the check and are stored by Buffer.from.

const documentBytes = 1000;
const limit = maxSplitOutputBytes(documentBytes);

/** Runs the split node against a pool that answers `parts`; "stored" when the parts reached the store. */
async function splitWith(parts: { bytes: unknown }[]): Promise<string> {
  const pool = { options: { timeoutMs: 1000, memoryMb: 256 }, run: async () => ({ pageCount: parts.length, parts }) };
  const store = {
    localCopy: async () => ({ path: "/nonexistent", release: async () => {} }),
    stage: async () => {
      throw new Error("stored");
    },
  };
  const context = {
    execution: { pool, store, splitMaxParts: 100 },
    state: { file: { format: "pdf", organization_id: "o", sha256: "s", size: BigInt(documentBytes), name: "a.pdf" }, run: { id: "r" } },
    signal: new AbortController().signal,
    step: "cut",
  };
  const node = { kind: { case: "split", value: { pagesPerPart: 1, ranges: "", atText: "" } } };
  return executeSplit(node as never, {} as never, context as never).then(
    () => "resolved",
    (error: Error & { code?: string }) => error.code ?? error.message,
  );
}

describe("the worker's recheck of a split's part bytes", () => {
  it("parts whose bytes are an ArrayBuffer past the limit are refused as not documents (parse_crashed), not stored", async () => {
    expect(await splitWith([{ bytes: new ArrayBuffer(limit + 1) }])).toBe("parse_crashed");
  });

  it("parts whose bytes are a string that UTF-8 makes past the limit are refused as not documents (parse_crashed), not stored", async () => {
    // length is a third of the limit; Buffer.from makes it the limit and more.
    expect(await splitWith([{ bytes: "\u0800".repeat(Math.ceil(limit / 3) + 1) }])).toBe("parse_crashed");
  });

  it("control: a Uint8Array past the limit is refused", async () => {
    expect(await splitWith([{ bytes: new Uint8Array(limit + 1) }])).toBe("split_too_large");
  });
});
