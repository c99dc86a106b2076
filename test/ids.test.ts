import { describe, expect, it } from "vitest";
import { isUuid, newId } from "../src/platform/ids.ts";

describe("newId", () => {
  it("makes UUIDv7s that sort in the order they were made and never repeat, past many refills of its random pool", () => {
    const ids = Array.from({ length: 5000 }, () => newId());
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      // Version 7, RFC 9562 variant.
      expect(id[14]).toBe("7");
      expect("89ab").toContain(id[19]);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("starts with the time it was made, in milliseconds", () => {
    const before = Date.now();
    const id = newId();
    const msecs = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(Date.now() + 1);
  });
});
