import { describe, expect, it } from "vitest";
import { chunkElements } from "../../src/documents/chunk/chunk.ts";
import type { Element } from "../../src/documents/parse/elements/element.ts";
import { tableElement } from "../../src/documents/parse/elements/table.ts";

const title = (text: string, page = 1): Element => ({ type: "Title", text, level: 1, page });
const narrative = (text: string, page = 1): Element => ({ type: "NarrativeText", text, page });

describe("chunkElements", () => {
  const document: Element[] = [
    { type: "Header", text: "ACME confidential", page: 1 },
    title("Intro"),
    narrative("Short first paragraph."),
    narrative("Second one.", 2),
    title("Method", 2),
    narrative("Only this.", 2),
    { type: "PageNumber", text: "2", page: 2 },
  ];

  it("by title: a new chunk at each Title, so no chunk spans two sections; furniture left out", () => {
    expect(chunkElements(document, { strategy: "by_title", maxCharacters: 500, overlapCharacters: 0 })).toEqual([
      { text: "Intro\n\nShort first paragraph.\n\nSecond one.", pages: [1, 2], elementCount: 3 },
      { text: "Method\n\nOnly this.", pages: [2], elementCount: 2 },
    ]);
  });

  it("by size: elements packed across sections up to the limit", () => {
    expect(chunkElements(document, { strategy: "by_size", maxCharacters: 500, overlapCharacters: 0 })).toEqual([
      { text: "Intro\n\nShort first paragraph.\n\nSecond one.\n\nMethod\n\nOnly this.", pages: [1, 2], elementCount: 5 },
    ]);
    expect(chunkElements(document, { strategy: "by_size", maxCharacters: 40, overlapCharacters: 0 }).map((chunk) => chunk.text)).toEqual([
      "Intro\n\nShort first paragraph.",
      "Second one.\n\nMethod\n\nOnly this.",
    ]);
  });

  it("never cuts a character outside the Basic Multilingual Plane (an emoji, a rare CJK ideograph) in two", () => {
    const text = `${"😀".repeat(20)}${"a𠀀b".repeat(6)}`;
    for (let max = 2; max <= 9; max++) {
      for (let overlap = 0; overlap <= max / 2; overlap++) {
        const chunks = chunkElements([narrative(text)], { strategy: "by_size", maxCharacters: max, overlapCharacters: overlap });
        const pieces = chunks.map((chunk) => chunk.text);
        expect(
          pieces.filter((piece) => !piece.isWellFormed()),
          `max ${max}, overlap ${overlap}`,
        ).toEqual([]);
        expect(pieces.filter((piece) => piece.length > max)).toEqual([]);
        expect(new Set([...pieces.join("")])).toEqual(new Set([...text]));
      }
    }
    // A limit of one cannot hold a pair: each goes whole.
    expect(chunkElements([narrative("😀😀")], { strategy: "by_size", maxCharacters: 1, overlapCharacters: 0 }).map((chunk) => chunk.text)).toEqual([
      "😀",
      "😀",
    ]);
  });

  it("splits an element longer than the limit at whitespace, with the overlap, and no chunk is ever longer than the limit", () => {
    const long = narrative(Array.from({ length: 60 }, (_, index) => `word${index}`).join(" "));
    const chunks = chunkElements([title("Long"), long], { strategy: "by_title", maxCharacters: 50, overlapCharacters: 10 });
    expect(chunks.length).toBeGreaterThan(8);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(50);
    // Each piece after the first starts with the last 10 characters before it.
    const [first, second] = [chunks[1]!.text, chunks[2]!.text];
    expect(first.slice(-12)).toContain(second.slice(0, 8));
    expect(chunks.every((chunk) => chunk.elementCount === 1 || chunk.text.startsWith("Long"))).toBe(true);
  });

  it("never cuts a table inside a row, and never mixes a table with text", () => {
    const rows = Array.from({ length: 20 }, (_, index) => [`item ${index}`, `${index * 10}`, "note"]);
    const table = tableElement(rows, { page: 3 })!;
    const chunks = chunkElements([narrative("Before."), table, narrative("After.")], { strategy: "by_size", maxCharacters: 60, overlapCharacters: 20 });
    expect(chunks[0]!.text).toBe("Before.");
    expect(chunks.at(-1)!.text).toBe("After.");
    const tableChunks = chunks.slice(1, -1);
    const rowTexts = rows.map((row) => row.join("\t"));
    for (const chunk of tableChunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(60);
      for (const line of chunk.text.split("\n")) expect(rowTexts).toContain(line);
      expect(chunk.pages).toEqual([3]);
    }
    expect(tableChunks.flatMap((chunk) => chunk.text.split("\n"))).toEqual(rowTexts);
  });

  it("gives nothing for a document without text", () => {
    expect(chunkElements([], { strategy: "by_title", maxCharacters: 100, overlapCharacters: 0 })).toEqual([]);
  });
});
