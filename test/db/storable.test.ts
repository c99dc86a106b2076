import { type Kysely, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/data/db/schema.ts";
import { storableJson, storableParameters, storableText, storableValue } from "../../src/data/db/storable.ts";
import { newId } from "../../src/platform/ids.ts";
import { testDatabase } from "../support/database.ts";

const LONE_HIGH = "\uD800";
const LONE_LOW = "\uDC00";

describe("storable text", () => {
  it("turns lone surrogates into U+FFFD, removes NUL, and keeps everything else (pairs included)", () => {
    expect(storableText(`a${LONE_HIGH}b${LONE_LOW}c\u0000d`)).toBe("a\uFFFDb\uFFFDcd");
    expect(storableText("😀 é \t\n")).toBe("😀 é \t\n");
    expect(storableText(`${LONE_LOW}${LONE_HIGH}`)).toBe("\uFFFD\uFFFD"); // reversed halves are no pair
  });

  it("cleans every string of a jsonb value, keys included, and leaves other values alone", () => {
    const value = { [`k${LONE_HIGH}`]: [`v\u0000`, 1, true, null, { nested: LONE_LOW }] };
    expect(storableValue(value)).toEqual({ "k\uFFFD": ["v", 1, true, null, { nested: "\uFFFD" }] });
    expect(storableJson(value)).toBe('{"k\uFFFD":["v",1,true,null,{"nested":"\uFFFD"}]}');
  });

  it("copies a value even when nothing in it changes, so a step's output is a snapshot", () => {
    const clean = { a: ["x", 1, { b: "y" }], c: null };
    const copy = storableValue(clean) as typeof clean;
    expect(copy).toEqual(clean);
    expect(copy).not.toBe(clean);
    expect(copy.a[2]).not.toBe(clean.a[2]);
  });

  it("writes the JSON of a clean value as it is, and cleans one whose JSON holds a NUL or a lone surrogate", () => {
    expect(storableJson({ a: "text \\u0000 that only looks like an escape", b: "😀" })).toBe(
      JSON.stringify({ a: "text \\u0000 that only looks like an escape", b: "😀" }),
    );
    expect(storableJson({ a: `nul\u0000`, [`k${LONE_LOW}`]: 1 })).toBe('{"a":"nul","k\uFFFD":1}');
  });
});

describe("every query's strings are made storable", () => {
  let db: Kysely<Database>;
  beforeAll(async () => {
    db = await testDatabase();
  });

  it("a text column written through the query builder or raw SQL keeps no NUL or lone surrogate", async () => {
    const id = newId();
    await db
      .insertInto("organizations")
      .values({ id, name: `org\u0000${LONE_HIGH}`, plan: "free" })
      .execute();
    expect((await db.selectFrom("organizations").select("name").where("id", "=", id).executeTakeFirstOrThrow()).name).toBe("org\uFFFD");
    await sql`update organizations set name = ${`raw${LONE_LOW}\u0000`} where id = ${id}`.execute(db);
    expect((await db.selectFrom("organizations").select("name").where("id", "in", [id]).executeTakeFirstOrThrow()).name).toBe("raw\uFFFD");
  });

  it("strings in an array parameter (the rows of an unnest) are made storable too", async () => {
    const { rows } = await sql<{ texts: string[] }>`select ${[`a\u0000b`, `c${LONE_HIGH}`, "plain"]}::text[] as texts`.execute(db);
    expect(rows[0]!.texts).toEqual(["ab", "c\uFFFD", "plain"]);
  });

  it("copies a statement's parameters only where a string changes, and never changes the caller's arrays", () => {
    const clean = [["a", "b"], [1, 2], "c", null, new Date(0)];
    expect(storableParameters(clean)).toBe(clean);
    const names = ["plain", `nul\u0000`];
    const dirty = [["id"], names, 7];
    const stored = storableParameters(dirty);
    expect(stored).toEqual([["id"], ["plain", "nul"], 7]);
    expect(stored[0]).toBe(dirty[0]);
    expect(names).toEqual(["plain", `nul\u0000`]);
  });

  it("a jsonb value written as storableJson is accepted, where the raw JSON text is refused", async () => {
    const value = { text: `hello ${LONE_HIGH} world\u0000` };
    await expect(sql`select ${JSON.stringify(value)}::jsonb`.execute(db)).rejects.toThrow(/Unicode|unsupported|invalid/i);
    const { rows } = await sql<{ value: unknown }>`select ${storableJson(value)}::jsonb as value`.execute(db);
    expect(rows[0]!.value).toEqual({ text: "hello \uFFFD world" });
  });
});
