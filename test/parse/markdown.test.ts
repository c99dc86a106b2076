import { describe, expect, it } from "vitest";
import type { Element } from "../../src/documents/parse/elements/element.ts";
import { elementsToMarkdown } from "../../src/documents/parse/elements/markdown.ts";
import { tableElement } from "../../src/documents/parse/elements/table.ts";

const paragraphs = (...texts: string[]): Element[] => texts.map((text) => ({ type: "NarrativeText", text }));

describe("elementsToMarkdown", () => {
  it.each([
    ["# not a heading", "\\# not a heading"],
    ["> not a quote", "\\> not a quote"],
    ["- not a list", "\\- not a list"],
    ["+ not a list", "\\+ not a list"],
    ["* not a list", "\\* not a list"],
    ["1. not a list", "1\\. not a list"],
    ["12) not a list", "12\\) not a list"],
    ["  # indented", "  \\# indented"],
    ["\t> tabbed", "\t\\> tabbed"],
    ["first line\n# second line", "first line\n\\# second line"],
    ["first line\r\n- second line", "first line\r\n\\- second line"],
    ["first\u2028- after a line separator", "first\u2028\\- after a line separator"],
    // Element text is plain text: inline syntax in it is escaped wherever it is.
    ["*emphasis* stays text", "\\*emphasis\\* stays text"],
    ["a <form> and a <br> tag", "a \\<form> and a \\<br> tag"],
    ["files named *_backup_*", "files named \\*\\_backup\\_\\*"],
    ["run `npm test` or see [docs](x)", "run \\`npm test\\` or see \\[docs](x)"],
    ["C:\\temp\\*.tmp", "C:\\\\temp\\\\\\*.tmp"],
  ])("escapes what would read as syntax: %j", (text, markdown) => {
    expect(elementsToMarkdown(paragraphs(text))).toBe(markdown);
  });

  it.each(["Plain prose.", "2026 was a good year", "-5 degrees", "1.5 litres", "a > b & c ~ d"])("leaves text that is not syntax as it is: %j", (text) => {
    expect(elementsToMarkdown(paragraphs(text))).toBe(text);
  });

  it("joins blocks by a blank line and list items by a line break, headings by level", () => {
    const elements: Element[] = [
      { type: "Title", text: "Top", level: 1 },
      { type: "ListItem", text: "one" },
      { type: "ListItem", text: "two\nlines" },
      { type: "Title", text: "# Sub", level: 2 },
      { type: "Footer", text: "left out" },
      { type: "NarrativeText", text: "  " },
      ...paragraphs("End."),
    ];
    expect(elementsToMarkdown(elements)).toBe("# Top\n\n- one\n- two lines\n\n## \\# Sub\n\nEnd.");
  });
});

describe("tableElement", () => {
  it("pads rows to the widest, escapes cells in its HTML and makes the first row the header", () => {
    expect(tableElement([["a & b", "<c>"], ["d"], ["", " "], [" e ", "f", "g"]])).toEqual({
      type: "Table",
      text: "a & b\t<c>\t\nd\t\t\ne\tf\tg",
      table: {
        rows: [
          ["a & b", "<c>", ""],
          ["d", "", ""],
          ["e", "f", "g"],
        ],
        html: "<table><tr><th>a &amp; b</th><th>&lt;c&gt;</th><th></th></tr><tr><td>d</td><td></td><td></td></tr><tr><td>e</td><td>f</td><td>g</td></tr></table>",
      },
    });
    expect(elementsToMarkdown([tableElement([["a|b", "c"], ["1"]])!])).toBe("| a\\|b | c |\n| --- | --- |\n| 1 |  |");
  });

  it("is no table when no cell has text", () => {
    expect(tableElement([["", " "], []])).toBeUndefined();
  });
});
