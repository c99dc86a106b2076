import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { placedTextPdf } from "./samples.ts";

describe("PDF: a word hyphenated at a line's end", () => {
  it("is joined back into one word in the paragraph's element", async () => {
    const output = await parseDocument(
      "pdf",
      placedTextPdf([
        [
          { x: 72, y: 700, size: 10, text: "The committee reviewed the appli-" },
          { x: 72, y: 688, size: 10, text: "cation and approved the budget for" },
          { x: 72, y: 676, size: 10, text: "the coming year without changes." },
        ],
      ]),
    );
    // pdf-layout's endedEarly already reads the hyphen as a wrapped word, but classifyParagraph joins
    // the lines with a space: "The committee reviewed the appli- cation and approved ...".
    const paragraph = output.elements?.find((element) => element.type === "NarrativeText");
    expect(paragraph?.text).toBe("The committee reviewed the application and approved the budget for the coming year without changes.");
    expect(output.markdown).not.toContain("appli- cation");
  });
});
