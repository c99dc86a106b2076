import { describe, expect, it } from "vitest";
import { patternSteps } from "../../src/nodes/pattern-steps.ts";

describe("a pattern's steps at one position of a text", () => {
  it("are counted for patterns without unbounded repetition", () => {
    // A step to enter the pattern's alternative, one per character.
    expect(patternSteps("invoice")).toBe(8);
    // Alternatives add up; what follows a choice is tried once per way through it.
    expect(patternSteps("a|bc")).toBe(5);
    expect(patternSteps("(a|b)c")).toBe(8);
    expect(patternSteps("^\\d{4}-\\d{2}-\\d{2}$")).toBe(21);
    // A greedy repetition of one character: a way per count (two steps a turn), each trying the rest.
    expect(patternSteps("[a-z]{1,100}")).toBe(201);
    expect(patternSteps("[a-z]{1,100}x")).toBe(301);
    expect(patternSteps("[a-z]{1,100}[a-z]{1,100}")).toBe(20_201);
    // A lookaround is atomic: its steps count once, and it adds no ways.
    expect(patternSteps("(?<![\\p{L}\\p{N}])invoice(?![\\p{L}\\p{N}])")).toBe(14);
    // Groups cost a step each, empty or not.
    expect(patternSteps(`${"()".repeat(1000)}!`)).toBe(2002);
  });

  it("are unbounded for unbounded repetition, backreferences, blow-ups and what does not parse", () => {
    for (const source of ["a*", "a+b", "x{2,}", "(a)\\1", "(?:a?){1,1000}", "(a|a){1,40}", "(?:){0,1000000}", "(("]) {
      expect(patternSteps(source), source).toBe(Infinity);
    }
  });
});
