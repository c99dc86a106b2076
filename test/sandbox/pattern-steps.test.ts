import { describe, expect, it } from "vitest";
import { patternCost } from "../../src/runs/sandbox/pattern-steps.ts";

const patternSteps = (source: string) => patternCost(source).steps;

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
    expect(patternSteps("(?<![a-z0-9])invoice(?![a-z0-9])")).toBe(14);
    // Groups cost a step each, empty or not.
    expect(patternSteps(`${"()".repeat(20)}!`)).toBe(42);
    // Any character, a negated set or class and a property escape are wide: 50 steps each.
    expect(patternSteps("a.b")).toBe(53);
    expect(patternSteps("[^x]\\S\\W")).toBe(151);
    expect(patternSteps("[\\p{L}\\d]")).toBe(51);
  });

  it("are unbounded for unbounded repetition, backreferences, blow-ups and what does not parse", () => {
    for (const source of ["a*", "a+b", "x{2,}", "(a)\\1", "(?:a?){1,1000}", "(a|a){1,40}", "(?:){0,1000000}", "(("]) {
      expect(patternSteps(source), source).toBe(Infinity);
    }
  });

  it("are not counted for a source V8 may be slow to compile: over 64 characters, or over four wide atoms", () => {
    expect(patternSteps("a".repeat(64))).toBe(65);
    expect(patternSteps("a".repeat(65))).toBe(Infinity);
    expect(patternSteps("\\p{L}".repeat(4))).toBe(201);
    expect(patternSteps("\\p{L}".repeat(4) + ".")).toBe(Infinity);
    // A class holding a property escape counts as two: the class and the escape.
    expect(patternSteps("[\\p{L}][\\p{N}]")).toBe(101);
    expect(patternSteps("[\\p{L}][\\p{N}].")).toBe(Infinity);
  });

  it("come with the pattern's capture groups, which every match found copies", () => {
    expect(patternCost("(a)(?:b)(?<c>c)").captures).toBe(2);
    // A repetition of one way a turn is counted at once, however long.
    expect(patternSteps("(?:x){0,100000}")).toBe(400_001);
  });
});
