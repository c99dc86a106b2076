import { describe, expect, it } from "vitest";
import { PageLines } from "../../src/documents/parse/page-lines.ts";

describe("PageLines: an element's text split at its page's lines", () => {
  const lines = new PageLines("Invoice INV-7\nTotal: 12,00 €\nTotal: 12,00 € Amount due: 12,00 €\nAmount due:\n  Thanks  a lot  \n");

  it("splits a paragraph at the lines the page draws", () => {
    expect(new PageLines("Invoice INV-7\nDate: 2026-12-05").split("Invoice INV-7 Date: 2026-12-05")).toEqual(["Invoice INV-7", "Date: 2026-12-05"]);
  });

  it("takes the longest line from each start", () => {
    expect(lines.split("Total: 12,00 € Amount due: 12,00 € Invoice INV-7")).toEqual(["Total: 12,00 € Amount due: 12,00 €", "Invoice INV-7"]);
  });

  it("keeps what no line starts as one line, and a text that is one line whole", () => {
    expect(lines.split("Invoice INV-7 paid in full")).toEqual(["Invoice INV-7", "paid in full"]);
    expect(lines.split("Nothing drawn here")).toEqual(["Nothing drawn here"]);
    expect(lines.split("Invoice INV-7")).toEqual(["Invoice INV-7"]);
    expect(lines.split("   ")).toEqual([]);
  });

  it("matches a line's inner spaces as drawn, and skips the spaces between lines", () => {
    expect(lines.split("Thanks  a lot    Invoice INV-7")).toEqual(["Thanks  a lot", "Invoice INV-7"]);
    expect(lines.split("Thanks a lot")).toEqual(["Thanks a lot"]);
  });

  it("splits 20,000 lines that share their first word, each once", () => {
    const page = Array.from({ length: 20_000 }, (_, line) => `line ${line}`);
    expect(new PageLines(page.join("\n")).split(page.join(" "))).toEqual(page);
  });
});
