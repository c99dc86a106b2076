/**
 * The one place where text becomes storable. PostgreSQL refuses NUL in text and jsonb, and refuses
 * a lone UTF-16 surrogate (which no UTF-8 can encode); a document can decode to either (`&#xD800;`
 * in HTML, `_xD800_` in OOXML, a NUL in plain text). Lone surrogates become U+FFFD, NULs are removed.
 */
export function storableText(text: string): string {
  const clean = text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
  return clean.isWellFormed() ? clean : clean.toWellFormed();
}

/** Whether PostgreSQL takes `text` as it is: no NUL, no half of a surrogate pair (storableText leaves it unchanged). */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && text.isWellFormed();
}

/** An object of JSON's kind: a literal's, or one made without a prototype (JSONata's `{...}`). */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A deep copy of `value` (plain objects and arrays) with every string in it, object keys included,
 * made storable; for jsonb. A copy even when nothing changes: a step's output (a JSONata result
 * may be the run data itself, or part of it) becomes a snapshot, not a view of data that later steps change.
 */
export function storableValue(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value !== null && typeof value === "object" && isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableValue(item)]));
  }
  return value;
}

/**
 * What JSON text holds for a string PostgreSQL refuses in jsonb: a NUL, or a surrogate escape
 * (JSON.stringify writes a lone surrogate as `\ud800`; a paired one as itself). Also true for text
 * that only looks so (an escaped backslash before `u0000`): that costs the careful path, nothing more.
 */
const REFUSED_IN_JSONB = /\\u(?:0000|d[89a-f])/i;

/**
 * The jsonb text of `value`, storable whatever its strings hold. Most values (a step's output, made
 * storable when the step ended) need nothing: one JSON.stringify, and a scan of its text for what
 * PostgreSQL refuses, rather than a copy of the value first.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined || !REFUSED_IN_JSONB.test(json) ? json : JSON.stringify(storableValue(value));
}

/**
 * A statement's parameters with every string in them (an array's too) made storable, so no write of
 * any text column can fail on what a document or a client sent; for the pg client that sends every
 * statement (src/data/db/connection.ts). jsonb values are written as JSON text: their writers use
 * `storableJson`, since a lone surrogate is an escape (`\ud800`) there. Copied only where a string
 * changes: nearly always `values` itself comes back, so the run insert's arrays are not copied per call.
 */
export function storableParameters(values: readonly unknown[]): readonly unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    const storable = storableParameter(value);
    if (!Object.is(storable, value)) {
      copy ??= values.slice();
      copy[index] = storable;
    }
  }
  return copy ?? values;
}

function storableParameter(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  return Array.isArray(value) ? storableParameters(value) : value;
}
