import { describe, expect, it } from "vitest";
import { pdfLayoutElements } from "../../src/documents/parse/elements/pdf-layout.ts";

/** One page whose lines form one paragraph, every line ending with `end`. */
function page(lines: number, end: string) {
  const text = `${"ab ".repeat(300)}abc${end}`;
  const items = Array.from({ length: lines }, (_, index) => ({ str: text, x: 72, y: 100_000 - index * 12, width: 500, size: 10, font: "F1" }));
  return [{ page: 1, width: 612, height: 100_000, items }];
}

function timed(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

describe("PDF: joining a paragraph's hyphenated lines (joinLines)", () => {
  it("takes time linear in the paragraph, as joining unhyphenated lines does", () => {
    // joinLines does `text = text.slice(0, -1) + next` for each line ending with a hyphen: slicing
    // the concatenated text flattens it, a copy of the whole paragraph so far per line. A PDF of
    // 3,000 such lines (about 2.7 MB of text, a few kilobytes compressed) holds the parse for seconds.
    const lines = 3000;
    const plain = timed(() => pdfLayoutElements(page(lines, "x")));
    const hyphenated = timed(() => pdfLayoutElements(page(lines, "-")));
    const soft = timed(() => pdfLayoutElements(page(lines, "\u00ad")));
    expect(pdfLayoutElements(page(3, "-"))[0]?.text).not.toContain("- ");
    expect(hyphenated).toBeLessThan(plain * 4 + 1000);
    expect(soft).toBeLessThan(plain * 4 + 1000);
  }, 60_000);
});
