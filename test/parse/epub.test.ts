import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/parse/parse-document.ts";
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

  it("a package whose container names no package document fails as document_corrupt", async () => {
    const broken = epub();
    const { unzipSync, zipSync, strToU8 } = await import("fflate");
    const files = unzipSync(broken);
    files["META-INF/container.xml"] = strToU8("<container><rootfiles/></container>");
    await expect(parseDocument("epub", zipSync(files))).rejects.toMatchObject({ code: "document_corrupt" });
  });
});
