import { marked } from "marked";
import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

/** What a CommonMark renderer shows of `markdown`: its HTML's text, entities decoded. */
function shown(markdown: string): string {
  const html = marked.parse(markdown, { async: false });
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

describe("Markdown: text that looks like inline Markdown or HTML", () => {
  it("shows a paragraph's text as written when rendered", async () => {
    // A how-to page that names tags and file patterns: ordinary technical prose.
    const output = await parseDocument(
      "html",
      Buffer.from("<p>Wrap the fields in a &lt;form&gt; element; a &lt;br&gt; tag breaks the line.</p><p>Files named *_backup_* or *.tmp are skipped.</p>"),
    );
    expect(output.elements?.map((element) => element.text)).toEqual([
      "Wrap the fields in a <form> element; a <br> tag breaks the line.",
      "Files named *_backup_* or *.tmp are skipped.",
    ]);
    // Today the Markdown holds the paragraphs as they are: a renderer takes <form> and <br> as raw
    // HTML (they vanish, or become a form and a line break) and *_backup_* as emphasis.
    expect(shown(output.markdown ?? "")).toBe("Wrap the fields in a <form> element; a <br> tag breaks the line.\nFiles named *_backup_* or *.tmp are skipped.");
  });
});
