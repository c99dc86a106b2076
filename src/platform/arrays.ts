// Array helpers for arrays of any length: spreading one into a call (`target.push(...items)`,
// `Math.max(...values)`) passes each item as an argument, and past about 120,000 items the call
// overflows the stack ("Maximum call stack size exceeded").

/** Appends `items` to `target`, one by one. */
export function appendAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item);
}

/** The largest of `values`, -Infinity when there are none (as Math.max()). */
export function maxOf(values: Iterable<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const value of values) if (value > max || Number.isNaN(value)) max = value;
  return max;
}

/** The smallest of `values`, Infinity when there are none (as Math.min()). */
export function minOf(values: Iterable<number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const value of values) if (value < min || Number.isNaN(value)) min = value;
  return min;
}

/** Puts `item` at `at` in `list`; at its end, as almost always, when `at` is -1 or past it. */
export function insertAt<T>(list: T[], at: number, item: T): void {
  if (at < 0 || at >= list.length) list.push(item);
  else list.splice(at, 0, item);
}
