import { describe, expect, it } from "vitest";
import { htmlElements } from "../../src/documents/parse/elements/html.ts";

describe("HTML: a very long paragraph", () => {
  it("reads a paragraph of five million single-spaced words (a test for it recursed past the stack)", () => {
    const words = 5_000_000;
    const text = Array.from({ length: words }, () => "ab").join(" ");
    const elements = htmlElements(`<p>${text}</p>`);
    expect(elements).toHaveLength(1);
    expect(elements[0]!.text.length).toBe(text.length);
  });
});
