import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { docxOfBody } from "./samples.ts";

describe("DOCX: non-breaking hyphens", () => {
  it("keeps the hyphen Word writes as <w:noBreakHyphen/> (Ctrl+Shift+-)", async () => {
    const output = await parseDocument(
      "docx",
      docxOfBody(
        '<w:p><w:r><w:t>Call 555</w:t></w:r><w:r><w:noBreakHyphen/><w:t xml:space="preserve">1234 or e</w:t></w:r><w:r><w:noBreakHyphen/><w:t>mail</w:t><w:softHyphen/><w:t> us.</w:t></w:r></w:p>',
      ),
    );
    // Today: "Call 5551234 or email us.". We write it as "-" (docs/parsing.md), as one searches for it;
    // an optional hyphen (w:softHyphen) shows only where Word breaks the line and is no text.
    expect(output.text).toBe("Call 555-1234 or e-mail us.");
    expect(output.elements?.[0]?.text).toBe("Call 555-1234 or e-mail us.");
  });
});
