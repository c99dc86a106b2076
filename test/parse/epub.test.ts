import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { epub } from "../formats/fixtures.ts";

describe("EPUB", () => {
  it("reads its chapters in the spine's order, each as HTML", async () => {
    const output = await parseDocument("epub", epub(["<h1>One</h1><p>First chapter.</p>", "<h1>Two</h1><ul><li>A point</li></ul>"]));
    expect(output.chapterCount).toBe(2);
    expect(output.elements).toEqual([
      { type: "Title", text: "One", level: 1 },
      { type: "NarrativeText", text: "First chapter." },
      { type: "Title", text: "Two", level: 1 },
      { type: "ListItem", text: "A point" },
    ]);
    expect(output.markdown).toBe("# One\n\nFirst chapter.\n\n# Two\n\n- A point");
  });

  it("reads a chapter once however often the spine lists it", async () => {
    const { unzipSync, zipSync, strToU8, strFromU8 } = await import("fflate");
    const files = unzipSync(epub([`<p>${"word ".repeat(40_000)}</p>`]));
    const opf = strFromU8(files["OEBPS/book.opf"]!);
    files["OEBPS/book.opf"] = strToU8(opf.replace('<itemref idref="c0"/>', '<itemref idref="c0"/>'.repeat(2000)));
    const started = performance.now();
    const output = await parseDocument("epub", zipSync(files));
    // Each listing was read in full: 2,000 copies of the chapter, 400 MB of text, before the output was cut.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(output).toMatchObject({ chapterCount: 1, truncated: false, elements: [{ type: "NarrativeText" }] });
  });

  it("a chapter of 200,000 paragraphs is read, its elements cut at 50,000 (it was refused as corrupt: a spread of its elements overflowed the stack)", async () => {
    const output = await parseDocument("epub", epub(["<p>a</p>".repeat(200_000)]));
    expect(output).toMatchObject({ chapterCount: 1, truncated: true });
    expect(output.elements).toHaveLength(50_000);
  });

  it("a package whose container names no package document fails as document_corrupt", async () => {
    const broken = epub();
    const { unzipSync, zipSync, strToU8 } = await import("fflate");
    const files = unzipSync(broken);
    files["META-INF/container.xml"] = strToU8("<container><rootfiles/></container>");
    await expect(parseDocument("epub", zipSync(files))).rejects.toMatchObject({ code: "document_corrupt" });
  });
});
