import { type AST, RegExpParser } from "@eslint-community/regexpp";

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

function elementCost(element: AST.Element): Cost {
  switch (element.type) {
    case "Character":
    case "CharacterSet":
    case "CharacterClass":
    case "ExpressionCharacterClass":
      return { paths: 1, steps: 1 };
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
 * The most steps (characters and assertions examined) a backtracking engine such as V8's can take
 * to try `source` (compiled with the `u` flag) at one position of a text; Infinity for a pattern
 * with an unbounded repetition (`*`, `+`, `{n,}`), a repetition of over MAX_REPEAT, or a
 * backreference, or past a billion. Matching at
 * every position of a text of n characters takes at most (n + 1) times this, so a pattern with a
 * small bound over a short text cannot backtrack for long, whatever the text holds. A source that
 * does not parse is unbounded (its compile error is reported elsewhere).
 *
 * Ours, by hand: the libraries that judge patterns (safe-regex and its kin) answer yes or no by
 * rules of thumb (star height) that miss `(a|a)*`-like blow-ups; this bound is exact arithmetic
 * over the parsed pattern (regexpp, ESLint's parser), and errs only on the high side.
 */
export function patternSteps(source: string): number {
  try {
    return alternatives(parser.parsePattern(source, 0, source.length, { unicode: true }).alternatives).steps;
  } catch {
    return Infinity;
  }
}
