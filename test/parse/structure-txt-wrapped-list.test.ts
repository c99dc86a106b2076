import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("plain text: a list whose items wrap", () => {
  it("reads each item as a ListItem, its continuation lines included", async () => {
    // As a README or a plain-text e-mail wraps a long item, the next line indented under its text.
    const text =
      "Before you start:\n\n- Install Node 24 from the official site, or use a version\n  manager such as nvm.\n- Copy the example configuration.\n- Run the tests.\n";
    const output = await parseDocument("txt", Buffer.from(text));
    // Today the whole list is one NarrativeText (its bullets kept, escaped in the Markdown as "\\-").
    const items = (output.elements ?? []).filter((element) => element.type === "ListItem");
    expect(items.map((item) => item.text.replace(/\s+/g, " "))).toEqual([
      "Install Node 24 from the official site, or use a version manager such as nvm.",
      "Copy the example configuration.",
      "Run the tests.",
    ]);
    expect(output.markdown).not.toContain("\\- ");
  });

  it("keeps a paragraph whose unmarked lines are not indented under an item as text", async () => {
    const output = await parseDocument("txt", Buffer.from("- not a list after all,\nas this line is not indented.\n"));
    expect(output.elements).toEqual([{ type: "NarrativeText", text: "- not a list after all,\nas this line is not indented." }]);
  });
});
