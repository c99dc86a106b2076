/**
 * The one place where text becomes storable. PostgreSQL refuses NUL in text and jsonb, and refuses
 * a lone UTF-16 surrogate (which no UTF-8 can encode); a document can decode to either (`&#xD800;`
 * in HTML, `_xD800_` in OOXML, a NUL in plain text). Lone surrogates become U+FFFD, NULs are removed.
 */
export function storableText(text: string): string {
  const clean = text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
  return clean.isWellFormed() ? clean : clean.toWellFormed();
}

/**
 * `value` with every string in it, object keys included, made storable; for jsonb. What is storable
 * already is returned as it is, not copied: a step's output is walked twice (kept, then written), and
 * nearly every one needs no change.
 */
export function storableValue(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return storableArray(value);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) return storableObject(value as Record<string, unknown>);
  return value;
}

function storableArray(items: unknown[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const stored = storableValue(item);
    if (copy === undefined && stored !== item) copy = items.slice(0, index);
    copy?.push(stored);
  }
  return copy ?? items;
}

function storableObject(object: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(object);
  let copy: [string, unknown][] | undefined;
  for (let index = 0; index < entries.length; index++) {
    const [key, item] = entries[index]!;
    const storedKey = storableText(key);
    const stored = storableValue(item);
    if (copy === undefined && (storedKey !== key || stored !== item)) copy = entries.slice(0, index);
    copy?.push([storedKey, stored]);
  }
  return copy === undefined ? object : Object.fromEntries(copy);
}

/** The jsonb text of `value`, storable whatever its strings hold. */
export function storableJson(value: unknown): string {
  return JSON.stringify(storableValue(value));
}

/**
 * A statement's parameters with every string in them (an array's too) made storable, so no write of
 * any text column can fail on what a document or a client sent; for the pg client that sends every
 * statement (src/db/connection.ts). jsonb values are written as JSON text: their writers use
 * `storableJson`, since a lone surrogate is an escape (`\ud800`) there.
 */
export function storableParameters(values: readonly unknown[]): unknown[] {
  return values.map(storableParameter);
}

function storableParameter(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  return Array.isArray(value) ? value.map(storableParameter) : value;
}
