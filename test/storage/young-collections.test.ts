import { expect, it, vi } from "vitest";
import { missingCollectionFlags, YoungCollections } from "../../src/data/storage/young-collections.ts";

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

it.each([
  ["npm start's flags", ["--expose-gc", "--no-memory-reducer"], true, []],
  ["V8's spelling with underscores", ["--expose-gc", "--no_memory_reducer"], true, []],
  ["--expose-gc alone", ["--expose-gc"], true, ["--no-memory-reducer"]],
  ["no flag", [], false, ["--expose-gc", "--no-memory-reducer"]],
  ["the memory reducer's flag without its --no-", ["--memory-reducer"], false, ["--expose-gc", "--no-memory-reducer"]],
  ["V8's --nomemory-reducer", ["--nomemory-reducer"], false, ["--expose-gc"]],
  ["--no-memory-reducer undone by a later --memory-reducer", ["--no-memory-reducer", "--memory-reducer"], true, ["--no-memory-reducer"]],
])("names the start flags missing: %s", (_, execArgv, exposed, missing) => {
  expect(missingCollectionFlags(execArgv, exposed ? ((() => {}) as unknown as NodeJS.GCFunction) : undefined)).toEqual(missing);
});
