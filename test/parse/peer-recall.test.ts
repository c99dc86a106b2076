import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

// Word recall of our parse output against Unstructured's expected outputs for its own example
// documents (documents/peer/README.md): the share of the words of its elements, counted with
// repetition, that our text (and our elements) hold.

const DIRECTORY = new URL("documents/peer/", import.meta.url);

interface PeerDocument {
  format: string;
  elements: { type: string; text: string }[];
}

const expected = JSON.parse(readFileSync(new URL("expected.json", DIRECTORY), "utf8")) as Record<string, PeerDocument>;

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The share of `wanted`'s words (with repetition) that `text` holds. */
function recall(wanted: string, text: string): number {
  const held = new Map<string, number>();
  for (const word of words(text)) held.set(word, (held.get(word) ?? 0) + 1);
  const all = words(wanted);
  let found = 0;
  for (const word of all) {
    const count = held.get(word) ?? 0;
    if (count > 0) {
      found++;
      held.set(word, count - 1);
    }
  }
  return all.length === 0 ? 1 : found / all.length;
}

/** The recall of our text measured when this test was written: it must not drop. */
const TEXT_RECALL: Record<string, number> = {
  "ideas-page.html": 1,
  // The expected output read the page as windows-1250 ("trčs"): the words it got wrong are "missing".
  "fake-html-cp1252.html": 0.94,
  "handbook-1p.docx": 0.99,
  "fake.docx": 1,
  // An XLSX's text is its strings; its numbers are in the elements' tables.
  "stanley-cups.xlsx": 0.44,
  "fake-text.txt": 1,
  "book-war-and-peace-1p.txt": 1,
};

describe("word recall against Unstructured's expected outputs", () => {
  it.each(Object.entries(expected))("%s: text and elements hold the expected words, and the elements every word of the text", async (name, peer) => {
    const bytes = readFileSync(new URL(name, DIRECTORY));
    const output = await parseDocument(peer.format, bytes, { contentType: peer.format === "html" ? "text/html" : "" });
    const wanted = peer.elements.map((element) => element.text).join("\n");
    const elementsText = (output.elements ?? []).map((element) => element.text).join("\n");
    expect(recall(wanted, output.text ?? "")).toBeGreaterThanOrEqual(TEXT_RECALL[name]!);
    // Every element's words, the XLSX numbers included; the windows-1250 words aside.
    expect(recall(wanted, elementsText)).toBeGreaterThanOrEqual(0.94);
    expect(recall(output.text ?? "", elementsText)).toBe(1);
  });
});
