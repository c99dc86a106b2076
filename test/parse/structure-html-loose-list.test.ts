import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: list items holding paragraphs", () => {
  it("are ListItems", async () => {
    // A "loose" list, as CommonMark renderers, Confluence and many CMSs write it.
    const output = await parseDocument("html", Buffer.from("<h2>Setup</h2><ol><li><p>Install the package.</p></li><li><p>Run the tests.</p></li></ol>"));
    // Today both are NarrativeText, and the Markdown has no list.
    expect(output.elements).toEqual([
      { type: "Title", text: "Setup", level: 2 },
      { type: "ListItem", text: "Install the package." },
      { type: "ListItem", text: "Run the tests." },
    ]);
    expect(output.markdown).toBe("## Setup\n\n- Install the package.\n- Run the tests.");
  });
});
