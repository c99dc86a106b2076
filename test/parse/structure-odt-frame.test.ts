import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { odt } from "../formats/fixtures.ts";

describe("ODT: a frame (text box, captioned figure) inside a paragraph", () => {
  it("keeps the paragraph's text after the frame", async () => {
    // LibreOffice writes a captioned figure or a text box as a draw:frame inside the paragraph it is anchored in.
    const output = await parseDocument(
      "odt",
      odt(
        '<text:p>See the chart<draw:frame draw:name="Frame1"><draw:text-box><text:p>Figure 1: Sales by region</text:p></draw:text-box></draw:frame>'
          + " for the regional breakdown of sales.</text:p><text:p>Next paragraph.</text:p>",
      ),
    );
    // Today the inner </text:p> ends the outer paragraph: " for the regional breakdown of sales." is
    // dropped from text and elements, and "See the chartFigure 1: Sales by region" becomes a Title.
    expect(output.text).toContain("for the regional breakdown of sales.");
    expect((output.elements ?? []).map((element) => element.text).join("\n")).toContain("for the regional breakdown of sales.");
    expect(output.elements).not.toContainEqual(expect.objectContaining({ text: "See the chartFigure 1: Sales by region" }));
    // The frame's paragraph comes after the paragraph it is anchored in.
    expect((output.elements ?? []).map((element) => element.text)).toEqual([
      "See the chart for the regional breakdown of sales.",
      "Figure 1: Sales by region",
      "Next paragraph.",
    ]);
  });
});
