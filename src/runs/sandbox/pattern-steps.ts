import { type AST, RegExpParser, visitRegExpAST } from "@eslint-community/regexpp";

/** Past this, a pattern's steps count as unbounded: no text is short enough to match it in the process. */
const MAX_STEPS = 1e9;

/**
 * What a backtracking engine can spend matching a part of a pattern at one position of the text,
 * at most: `paths`, the ways it can match (each a way the rest of the pattern is tried again), and
 * `steps`, the characters and assertions it examines trying every one of them.
 */
interface Cost {
  paths: number;
  steps: number;
}

/** A repetition of more than this counts as unbounded, whatever it repeats (an empty group costs no steps). */
const MAX_REPEAT = 100_000;

/**
 * The least anything costs: entering a group, an alternative or a repetition's turn is a step too
 * (the engine records captures and counts turns), or a thousand empty groups would cost nothing.
 */
const STEP: Cost = { paths: 1, steps: 1 };
const UNBOUNDED: Cost = { paths: Infinity, steps: Infinity };

function capped(cost: Cost): Cost {
  return cost.paths > MAX_STEPS || cost.steps > MAX_STEPS ? UNBOUNDED : cost;
}

/** `first` then `second`: every way of matching `first` tries all of `second`. */
function sequence(first: Cost, second: Cost): Cost {
  return capped({ paths: first.paths * second.paths, steps: first.steps + first.paths * second.steps });
}

function choice(costs: readonly Cost[]): Cost {
  return capped(costs.reduce((sum, cost) => ({ paths: sum.paths + cost.paths, steps: sum.steps + cost.steps }), { paths: 0, steps: 0 }));
}

function alternatives(list: readonly AST.Alternative[]): Cost {
  return choice(list.map((alternative) => alternative.elements.reduce((cost, element) => sequence(cost, elementCost(element)), STEP)));
}

/**
 * Any character (`.`), a negated set or class (`\S`, `\W`, `\D`, `[^...]`) or a property escape
 * (`\p{...}`): under the `u` flag, over a text with any character past U+00FF, V8 spends 20 to 40
 * times a plain character's time on each, and compiling them takes milliseconds.
 */
function isWide(element: AST.Node): boolean {
  if (element.type === "CharacterSet") return element.kind === "any" || element.kind === "property" || element.negate;
  return element.type === "CharacterClass" && (element.negate || element.elements.some(isWide));
}

/** What a wide atom counts as, in steps. */
const WIDE_STEPS = 50;

function elementCost(element: AST.Element): Cost {
  switch (element.type) {
    case "Character":
    case "CharacterSet":
    case "CharacterClass":
    case "ExpressionCharacterClass":
      return { paths: 1, steps: isWide(element) ? WIDE_STEPS : 1 };
    case "Assertion":
      // A lookaround is atomic: once it holds, nothing backtracks into it.
      return element.kind === "lookahead" || element.kind === "lookbehind"
        ? { paths: 1, steps: alternatives(element.alternatives).steps + 1 }
        : { paths: 1, steps: 1 };
    case "Group":
    case "CapturingGroup":
      return sequence(STEP, alternatives(element.alternatives));
    case "Quantifier":
      return repetition(sequence(STEP, elementCost(element.element)), element.min, element.max);
    case "Backreference":
      // What it compares is as long as what its group matched: not counted here, so not bounded.
      return UNBOUNDED;
  }
}

/**
 * `once` repeated `min` to `max` times. The engine's tries form a tree: each way of matching k
 * times is extended by every way of matching once more, so level k holds paths^k ways, and every
 * way from `min` on may end the repetition (and is one way the rest is tried).
 */
function repetition(once: Cost, min: number, max: number): Cost {
  if (max > MAX_REPEAT) return UNBOUNDED;
  // One way a turn: a way per count from min to max, and max turns' steps.
  if (once.paths === 1) return capped({ paths: max - min + 1, steps: max * once.steps });
  // More: the ways grow at least twofold a turn, so this ends within a few dozen turns.
  let ways = 1;
  let paths = 0;
  let steps = 0;
  for (let count = 0; count <= max; count++) {
    if (count >= min) paths += ways;
    if (count < max) steps += ways * once.steps;
    ways *= once.paths;
    if (paths > MAX_STEPS || steps > MAX_STEPS) return UNBOUNDED;
  }
  return { paths, steps };
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * What matching a pattern can cost in the process, at most: `steps` at one position of a text, and
 * its capture groups (each match found copies them).
 */
export interface PatternCost {
  steps: number;
  captures: number;
}

/**
 * A source longer than this, or with more wide atoms (isWide), is not counted: V8 compiles a
 * pattern on its first use, on the event loop, and again to machine code later (250 `.` under the
 * `iu` flags took 40 ms, then 25; a `\p{...}` about 0.2 ms).
 */
const MAX_SOURCE_LENGTH = 64;
const MAX_WIDE_ATOMS = 4;

/**
 * The most steps (characters, assertions, groups and turns examined) a backtracking engine such
 * as V8's can take to try `source` (compiled with the `u` flag) at one position of a text, and its
 * capture groups. Steps are Infinity for a pattern with an unbounded repetition (`*`, `+`, `{n,}`),
 * a repetition of over MAX_REPEAT, a backreference, past a billion, for a source over
 * MAX_SOURCE_LENGTH or MAX_WIDE_ATOMS, and for one that does not parse (its compile error is
 * reported elsewhere). Matching at every position of a text of n characters takes at most (n + 1)
 * times the steps, so a pattern with a small bound over a short text cannot backtrack for long,
 * whatever the text holds.
 *
 * Ours, by hand: the libraries that judge patterns (safe-regex and its kin) answer yes or no by
 * rules of thumb (star height) that miss `(a|a)*`-like blow-ups; this bound is exact arithmetic
 * over the parsed pattern (regexpp, ESLint's parser), and errs only on the high side.
 */
export function patternCost(source: string): PatternCost {
  if (source.length > MAX_SOURCE_LENGTH) return { steps: Infinity, captures: 0 };
  try {
    const pattern = parser.parsePattern(source, 0, source.length, { unicode: true });
    let captures = 0;
    let wide = 0;
    visitRegExpAST(pattern, {
      onCapturingGroupEnter: () => captures++,
      onCharacterSetEnter: (node) => void (isWide(node) && wide++),
      onCharacterClassEnter: (node) => void (isWide(node) && wide++),
    });
    if (wide > MAX_WIDE_ATOMS) return { steps: Infinity, captures };
    return { steps: alternatives(pattern.alternatives).steps, captures };
  } catch {
    return { steps: Infinity, captures: 0 };
  }
}
