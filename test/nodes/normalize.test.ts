import { describe, expect, it } from "vitest";
import { normalizeValue, parseBoolean, parseDate, parseMoney, parseNumber } from "../../src/runs/nodes/normalize.ts";
import { longestStall } from "../support/event-loop.ts";

describe("number normalization", () => {
  it.each([
    ["1.234,56", 1234.56],
    ["1,234.56", 1234.56],
    ["1 234,56", 1234.56],
    ["1'234.56", 1234.56],
    ["1\u00a0234,56", 1234.56],
    ["12,50", 12.5],
    ["12.50", 12.5],
    ["1.500", 1500],
    ["0.500", 0.5],
    ["1.234.567", 1234567],
    ["(12.50)", -12.5],
    ["-3", -3],
    ["Qty 2.", 2],
  ])("reads %s as %d", (text, value) => {
    expect(parseNumber(text)).toBe(value);
  });

  it("finds no number in text without digits", () => {
    expect(parseNumber("n/a")).toBeUndefined();
  });
});

describe("date normalization", () => {
  it.each([
    ["3 Nov 2026", "dmy", "2026-11-03"],
    ["03/11/2026", "dmy", "2026-11-03"],
    ["03/11/2026", "mdy", "2026-03-11"],
    ["3. November 2026", "dmy", "2026-11-03"],
    ["November 3, 2026", "mdy", "2026-11-03"],
    ["03.11.26", "dmy", "2026-11-03"],
    ["2026-11-03", "mdy", "2026-11-03"],
    ["2026/11/03", "ymd", "2026-11-03"],
    ["3 déc. 2026", "dmy", "2026-12-03"],
    ["3 de noviembre de 2026", "dmy", "2026-11-03"],
    ["15 dic. 2026", "dmy", "2026-12-15"],
    ["12 settembre 2026", "dmy", "2026-09-12"],
    ["1 mei 2026", "dmy", "2026-05-01"],
    ["3 maart 2026", "dmy", "2026-03-03"],
  ] as const)("reads %s (%s) as %s", (text, order, iso) => {
    expect(parseDate(text, order)).toBe(iso);
  });

  it("refuses dates that do not exist", () => {
    expect(parseDate("31/02/2026", "dmy")).toBeUndefined();
    expect(parseDate("13/13/2026", "mdy")).toBeUndefined();
  });
});

describe("money normalization", () => {
  it.each([
    ["EUR 12,50", { amount: 12.5, currency: "EUR" }],
    ["12.50 €", { amount: 12.5, currency: "EUR" }],
    ["$1,200.00", { amount: 1200, currency: "USD" }],
    ["£ 3", { amount: 3, currency: "GBP" }],
    ["1.334,56 CHF", { amount: 1334.56, currency: "CHF" }],
    ["Total 1 234,50\u00a0€", { amount: 1234.5, currency: "EUR" }],
    ["(12.50) USD", { amount: -12.5, currency: "USD" }],
    ["Ref. 2026-11 paid 40 EUR", { amount: 40, currency: "EUR" }],
    ["12-5 EUR", { amount: -5, currency: "EUR" }],
    ["EUR 12,50 (USD 14)", { amount: 12.5, currency: "EUR" }],
    ["12 USD or EUR 14", { amount: 12, currency: "USD" }],
  ])("reads %s", (text, money) => {
    expect(parseMoney(text, undefined)).toEqual(money);
  });

  it("gives a bare amount the field's currency", () => {
    expect(parseMoney("99,90", "EUR")).toEqual({ amount: 99.9, currency: "EUR" });
  });

  it("finds an amount before its currency in time linear in the text: runs of digits without one do not hold the event loop", async () => {
    const { outcome, stallMs } = await longestStall(async () => [
      parseMoney(`${"1".repeat(40_000)}x 12 EUR`, undefined),
      parseMoney(`${"1.".repeat(20_000)}x`, "EUR"),
      parseMoney(`${"1-".repeat(20_000)}`, undefined),
      parseMoney(`${"1 ".repeat(20_000)}E`, undefined),
    ]);
    expect(outcome).toEqual({
      status: "fulfilled",
      // A run of numbers among other text, without a currency or two decimals, holds no amount (see bareAmount).
      value: [{ amount: 12, currency: "EUR" }, undefined, undefined, undefined],
    });
    // /(number)\s*currency/ tried every start and end in a run: 9 s for the first text.
    expect(stallMs).toBeLessThan(500);
  });
});

describe("boolean normalization", () => {
  it("reads yes and no words in English, German and French", () => {
    expect(["yes", "True", "ja", "oui", "X"].map(parseBoolean)).toEqual([true, true, true, true, true]);
    expect(["no", "false", "nein", "non", "0"].map(parseBoolean)).toEqual([false, false, false, false, false]);
    expect(parseBoolean("maybe")).toBeUndefined();
  });
});

describe("trailing separators", () => {
  it("are trimmed in time linear in their run: a document's 40,000 of them before a letter do not hold the event loop", async () => {
    const options = { dateOrder: "dmy", currency: undefined } as const;
    const run = 40_000;
    const { outcome, stallMs } = await longestStall(async () => [
      parseNumber(`12${".".repeat(run)}`),
      parseBoolean(`yes${"!".repeat(run)}`),
      parseBoolean(`y${"!".repeat(run)}x`),
      normalizeValue(`INV-7${" ,".repeat(run)}`, "string", options),
      normalizeValue(`x${" ".repeat(run)}y`, "string", options),
    ]);
    expect(outcome).toEqual({ status: "fulfilled", value: [12, true, undefined, "INV-7", `x${" ".repeat(run)}y`] });
    // A regular expression such as /[.,]+$/ took 1.4 s per value here; the loop takes microseconds.
    expect(stallMs).toBeLessThan(500);
  });
});

describe("typed values", () => {
  it("are read from a text's first 256 characters, so a document's long run of digits does not hold the event loop", async () => {
    const options = { dateOrder: "dmy", currency: "EUR" } as const;
    const { outcome, stallMs } = await longestStall(async () => [
      normalizeValue(`12,50 € ${"x".repeat(100_000)}`, "money", options),
      normalizeValue(`${"1".repeat(40_000)}x`, "money", options),
      normalizeValue(`${"1.".repeat(20_000)}x`, "money", options),
      normalizeValue(`${" ".repeat(256)}12`, "number", options),
    ]);
    expect(outcome).toEqual({
      status: "fulfilled",
      value: [
        { amount: 12.5, currency: "EUR" },
        { amount: Number("1".repeat(256)), currency: "EUR" },
        { amount: Number("1".repeat(128)), currency: "EUR" },
        undefined,
      ],
    });
    // MONEY_AFTER tried every start in the run of digits: 9 s for the second value before.
    expect(stallMs).toBeLessThan(500);
  });
});
