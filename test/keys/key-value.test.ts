import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CHECKSUM_LENGTH,
  checksumOf,
  generateKeyValue,
  isWellFormedKeyValue,
  keyDigest,
  keyDigestBase64,
  keyHint,
  RANDOM_LENGTH,
} from "../../src/platform/keys/key-value.ts";

const BASE62_CHARS = [..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"];

describe("key values", () => {
  it("are the prefix, an underscore, 30 base62 characters and a 6-character checksum", () => {
    const value = generateKeyValue("dp");
    expect(value).toMatch(/^dp_[0-9A-Za-z]{36}$/);
    expect(value.slice(3 + RANDOM_LENGTH)).toBe(checksumOf(value.slice(3, 3 + RANDOM_LENGTH)));
  });

  it("carry at least 178 bits of randomness", () => {
    expect(RANDOM_LENGTH * Math.log2(62)).toBeGreaterThanOrEqual(178);
  });

  it("use the whole base62 alphabet, evenly enough to show no bias", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      for (const char of generateKeyValue("dp").slice(3, 3 + RANDOM_LENGTH)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([...BASE62_CHARS].sort());
    const expected = (2000 * RANDOM_LENGTH) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.2);
  });

  it("are unique", () => {
    const values = new Set(Array.from({ length: 10_000 }, () => generateKeyValue("dp")));
    expect(values.size).toBe(10_000);
  });

  it("have a checksum that fits every CRC32 in six characters", () => {
    expect(62 ** CHECKSUM_LENGTH).toBeGreaterThan(2 ** 32);
    expect(checksumOf("")).toBe("000000");
  });

  it("pass the format and checksum check when generated, with any prefix", () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z][a-z0-9]{0,9}$/), (prefix) => isWellFormedKeyValue(generateKeyValue(prefix))));
  });

  it("fail the check when any one character of the random part or checksum changes", () => {
    const value = generateKeyValue("dp");
    fc.assert(
      fc.property(fc.integer({ min: 3, max: value.length - 1 }), fc.constantFrom(...BASE62_CHARS), (position, char) => {
        fc.pre(value[position] !== char);
        return !isWellFormedKeyValue(value.slice(0, position) + char + value.slice(position + 1));
      }),
    );
  });

  it.each([
    ["empty", ""],
    ["no prefix", "abcdefghijklmnopqrstuvwxyz0123456789"],
    ["an upper-case prefix", (value: string) => `DP${value.slice(2)}`],
    ["one character short", (value: string) => value.slice(0, -1)],
    ["one character long", (value: string) => `${value}0`],
    ["a non-base62 character", (value: string) => `${value.slice(0, 10)}-${value.slice(11)}`],
    ["surrounding spaces", (value: string) => ` ${value} `],
    ["a very long value", (value: string) => value.repeat(1000)],
  ])("fail the check with %s", (_, make) => {
    const value = typeof make === "string" ? make : make(generateKeyValue("dp"));
    expect(isWellFormedKeyValue(value)).toBe(false);
  });

  it("are stored as the SHA-256 digest of the whole value", () => {
    const value = generateKeyValue("dp");
    expect(keyDigest(value)).toEqual(createHash("sha256").update(value).digest());
    expect(keyDigestBase64(value)).toBe(createHash("sha256").update(value).digest("base64"));
  });

  it("are shown as the prefix and the last four characters", () => {
    const value = generateKeyValue("acme");
    expect(keyHint(value)).toBe(`acme_…${value.slice(-4)}`);
  });
});
