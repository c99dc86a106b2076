import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { readWordDocument } from "../../src/documents/parse/elements/docx.ts";
import type { Element } from "../../src/documents/parse/elements/element.ts";
import { readElectronicBook } from "../../src/documents/parse/elements/epub.ts";
import { htmlElements } from "../../src/documents/parse/elements/html.ts";
import { markdownElements } from "../../src/documents/parse/elements/markdown-input.ts";
import { readOpenDocumentText } from "../../src/documents/parse/elements/odt.ts";
import { workbookElements } from "../../src/documents/parse/elements/spreadsheet.ts";
import { readSlides } from "../../src/documents/parse/ooxml.ts";
import { epub, odt } from "../formats/fixtures.ts";
import { docxOfBody } from "./samples.ts";

// A ragged table: one row of 1,000 cells (999 empty), then 1,000 rows of one cell, each padded to
// that width: about a million cells from some 20 KB of markup. Before, each reader built every
// such table whole (about 80 MB apiece; 20 of them took 1.6 GB), though the output keeps 1 MB of text.
const TABLES = 20;
const tablesOf = (elements: Element[]) => elements.filter((element) => element.type === "Table").length;
const HTML_TABLE = `<table><tr>${"<td></td>".repeat(999)}<td>wide</td></tr>${"<tr><td>x</td></tr>".repeat(1000)}</table>`;

describe("ragged tables: a document's tables stop being built once they hold what the output keeps", () => {
  it("HTML", () => {
    expect(tablesOf(htmlElements(HTML_TABLE.repeat(TABLES)))).toBeLessThanOrEqual(2);
  });

  it("DOCX", () => {
    const cell = (text: string) => `<w:tc><w:p>${text === "" ? "" : `<w:r><w:t>${text}</w:t></w:r>`}</w:p></w:tc>`;
    const table = `<w:tbl><w:tr>${cell("").repeat(999)}${cell("wide")}</w:tr>${`<w:tr>${cell("x")}</w:tr>`.repeat(1000)}</w:tbl>`;
    expect(tablesOf(readWordDocument(docxOfBody(table.repeat(TABLES))).elements)).toBeLessThanOrEqual(2);
  });

  it("PPTX: the slides of one presentation share the budget", () => {
    const cell = (text: string) => `<a:tc><a:txBody><a:p><a:r><a:t>${text}</a:t></a:r></a:p></a:txBody></a:tc>`;
    const table = `<a:tbl><a:tr>${cell("").repeat(999)}${cell("wide")}</a:tr>${`<a:tr>${cell("x")}</a:tr>`.repeat(1000)}</a:tbl>`;
    const slide = `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:graphicFrame><a:graphic><a:graphicData>${table}</a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>`;
    const parts: Record<string, Uint8Array> = { "ppt/presentation.xml": strToU8("<p:presentation/>") };
    for (let index = 1; index <= TABLES; index++) parts[`ppt/slides/slide${index}.xml`] = strToU8(slide);
    const { elements } = readSlides(zipSync(parts));
    expect(tablesOf(elements)).toBeGreaterThan(0);
    expect(tablesOf(elements)).toBeLessThanOrEqual(2);
  });

  it("ODT", () => {
    const cell = (text: string) => `<table:table-cell>${text === "" ? "" : `<text:p>${text}</text:p>`}</table:table-cell>`;
    const table = `<table:table><table:table-row>${cell("").repeat(999)}${cell("wide")}</table:table-row>${`<table:table-row>${cell("x")}</table:table-row>`.repeat(1000)}</table:table>`;
    expect(tablesOf(readOpenDocumentText(odt(table.repeat(TABLES))).elements)).toBeLessThanOrEqual(2);
  });

  it("EPUB: its chapters share the budget", () => {
    expect(tablesOf(readElectronicBook(epub(Array.from({ length: TABLES }, () => HTML_TABLE))).elements)).toBeLessThanOrEqual(2);
  });

  it("Markdown: its HTML blocks share the budget", () => {
    expect(tablesOf(markdownElements(Array.from({ length: TABLES }, () => HTML_TABLE).join("\n\n")))).toBeLessThanOrEqual(2);
  });

  it("XLSX: every sheet keeps its Title", () => {
    const ragged = [[...Array<string>(999).fill(""), "wide"], ...Array.from({ length: 1000 }, () => ["x"])];
    const elements = workbookElements(Array.from({ length: TABLES }, (_, index) => ({ number: index + 1, name: `R${index + 1}`, rows: ragged })));
    expect(elements.filter((element) => element.type === "Title")).toHaveLength(TABLES);
    expect(tablesOf(elements)).toBeLessThanOrEqual(2);
  });
});
