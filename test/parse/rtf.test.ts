import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

const rtf = (body: string) => new TextEncoder().encode(`{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Arial;}}{\\colortbl;\\red0\\green0\\blue0;}${body}}`);

describe("RTF", () => {
  it("gives its paragraphs, with code-page and Unicode escapes, tabs and line breaks, and skips tables of fonts, colours, metadata and pictures", async () => {
    const output = await parseDocument(
      "rtf",
      rtf(
        [
          "{\\info{\\title Secret title}{\\author Ana}}",
          "\\pard Delivery note\\par",
          "Caf\\'e9 order:\\tab 3\\line Stra\\u223?e 1\\par",
          "{\\*\\generator Writer 9;}{\\pict\\pngblip 89504e47}",
          "Price \\{net\\} 12\\'80 a box.\\par",
        ].join("\n"),
      ),
    );
    expect(output.text).toBe("Delivery note\n\nCafé order:\t3\nStraße 1\n\nPrice {net} 12€ a box.");
    expect(output.elements).toEqual([
      { type: "Title", text: "Delivery note", level: 1 },
      { type: "NarrativeText", text: "Café order:\t3\nStraße 1" },
      { type: "NarrativeText", text: "Price {net} 12€ a box." },
    ]);
    expect(output.text).not.toContain("Secret title");
  });

  it("a file nesting its groups thousands deep fails as document_corrupt, at once", async () => {
    await expect(parseDocument("rtf", new TextEncoder().encode(`{\\rtf1${"{".repeat(100_000)}x`))).rejects.toMatchObject({ code: "document_corrupt" });
  });
});
