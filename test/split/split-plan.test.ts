import { describe, expect, it } from "vitest";
import { countPartBytes, maxSplitOutputBytes, parseRanges, planParts, type SplitSettings } from "../../src/documents/split/split-plan.ts";

const settings = (overrides: Partial<SplitSettings>): SplitSettings => ({ pagesPerPart: 0, ranges: "", atText: "", ...overrides });
const noText = async () => {
  throw new Error("the text is not read for this split");
};

describe("parseRanges", () => {
  it("reads pages and ranges, spaces allowed", () => {
    expect(parseRanges("1-2, 3-7,8")).toEqual([
      { firstPage: 1, lastPage: 2 },
      { firstPage: 3, lastPage: 7 },
      { firstPage: 8, lastPage: 8 },
    ]);
  });

  it.each([
    ["", '"" is not a page or a range such as "3-7"'],
    ["1-2,,3", '"" is not a page or a range such as "3-7"'],
    ["a-b", '"a-b" is not a page or a range such as "3-7"'],
    ["0-2", '"0-2" must go from page 1 or later to a page not before its first'],
    ["5-3", '"5-3" must go from page 1 or later to a page not before its first'],
    [Array.from({ length: 1001 }, () => "1").join(","), "at most 1000 ranges"],
  ])("refuses %j: %s", (text, reason) => {
    expect(parseRanges(text)).toBe(reason);
  });
});

describe("planParts", () => {
  it("pages_per_part: a part every n pages, the last one shorter", async () => {
    expect(await planParts(settings({ pagesPerPart: 4 }), 9, noText, 100)).toEqual([
      { firstPage: 1, lastPage: 4, label: "pages 1-4" },
      { firstPage: 5, lastPage: 8, label: "pages 5-8" },
      { firstPage: 9, lastPage: 9, label: "page 9" },
    ]);
  });

  it("ranges: the parts named; a range past the last page fails the split", async () => {
    expect(await planParts(settings({ ranges: "2-3,5" }), 5, noText, 100)).toEqual([
      { firstPage: 2, lastPage: 3, label: "pages 2-3" },
      { firstPage: 5, lastPage: 5, label: "page 5" },
    ]);
    await expect(planParts(settings({ ranges: "1-2,3-7" }), 5, noText, 100)).rejects.toMatchObject({
      code: "split_pages_out_of_range",
      message: "the range pages 3-7 ends after the last page, 5",
    });
  });

  it("at_text: a new part at each page whose text holds the marker (any case), labelled with its line; pages before the first match are a part", async () => {
    const texts = ["cover sheet", "Invoice 1\nPage 1 of 2", "more", "INVOICE 2 page 1 of 1", "x\npage 1 of 3 — Acme", "y", "z"];
    const parts = await planParts(settings({ atText: "Page 1 of" }), texts.length, async (page) => texts[page - 1]!, 100);
    expect(parts).toEqual([
      { firstPage: 1, lastPage: 1, label: "page 1" },
      { firstPage: 2, lastPage: 3, label: "Page 1 of 2" },
      { firstPage: 4, lastPage: 4, label: "INVOICE 2 page 1 of 1" },
      { firstPage: 5, lastPage: 7, label: "page 1 of 3 — Acme" },
    ]);
    expect(await planParts(settings({ atText: "nowhere" }), 3, async () => "text", 100)).toEqual([{ firstPage: 1, lastPage: 3, label: "pages 1-3" }]);
  });

  it("fails with split_too_many_parts before reading past the limit", async () => {
    await expect(planParts(settings({ pagesPerPart: 1 }), 10_000, noText, 100)).rejects.toMatchObject({ code: "split_too_many_parts" });
    await expect(planParts(settings({ ranges: "1,2,3" }), 3, noText, 2)).rejects.toMatchObject({ code: "split_too_many_parts" });
    let read = 0;
    const every = async () => {
      read++;
      return "SEPARATOR";
    };
    await expect(planParts(settings({ atText: "separator" }), 10_000, every, 100)).rejects.toMatchObject({
      code: "split_too_many_parts",
      message: "the document would make more than 100 parts (SPLIT_MAX_PARTS)",
    });
    expect(read).toBe(101);
  });
});

describe("the bytes a split's parts may hold", () => {
  it("8 times the document and 64 MB together; past it, split_too_large", () => {
    const MB = 1024 * 1024;
    expect(maxSplitOutputBytes(MB)).toBe(72 * MB);
    expect(countPartBytes(70 * MB, 2 * MB, MB)).toBe(72 * MB);
    expect(() => countPartBytes(70 * MB, 2 * MB + 1, MB)).toThrow(expect.objectContaining({ code: "split_too_large" }));
  });
});
