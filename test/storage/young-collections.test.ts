import { expect, it, vi } from "vitest";
import { YoungCollections } from "../../src/data/storage/young-collections.ts";

it("collects the young generation once per threshold of upload bytes, counting across uploads", () => {
  const collect = vi.fn();
  const collections = new YoungCollections(collect as unknown as NodeJS.GCFunction, 1000);
  collections.received(600);
  expect(collect).not.toHaveBeenCalled();
  collections.received(400);
  expect(collect).toHaveBeenCalledTimes(1);
  expect(collect).toHaveBeenCalledWith({ type: "minor" });
  // The count starts again from zero after each collection.
  collections.received(999);
  expect(collect).toHaveBeenCalledTimes(1);
  collections.received(5000);
  expect(collect).toHaveBeenCalledTimes(2);
});

it("does nothing when the process runs without --expose-gc", () => {
  const collections = new YoungCollections(undefined, 1);
  expect(() => collections.received(10)).not.toThrow();
});
