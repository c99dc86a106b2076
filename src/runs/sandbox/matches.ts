export interface PatternMatch {
  index: number;
  /** The whole match, then each capture group (undefined when it took no part). */
  groups: (string | undefined)[];
}

/**
 * The first `limit` matches of the global `pattern` in `text`, from its start, up to the first
 * whose groups bring the characters taken past `characters`. The process (for a bounded pattern)
 * and the sandbox thread run this same function, so both find the same.
 */
export function firstMatches(pattern: RegExp, text: string, limit: number, characters: number): PatternMatch[] {
  const found: PatternMatch[] = [];
  let taken = 0;
  pattern.lastIndex = 0;
  for (const match of text.matchAll(pattern)) {
    const groups = Array.from(match);
    found.push({ index: match.index, groups });
    for (const group of groups) taken += group === undefined ? 0 : group.length;
    if (found.length >= limit || taken >= characters) break;
  }
  return found;
}
