import { escapeUTF8 } from "entities";
import { strToU8, zipSync } from "fflate";
import { PDFDocument, type PDFFont, type PDFPage, StandardFonts } from "pdf-lib";
import type { Block, InvoiceLayout } from "./layouts.ts";

/** The formats an invoice is written in. */
export type InvoiceFormat = "pdf" | "docx" | "txt" | "html";

/** Options of a plain-text rendering: columns set with tabs rather than runs of spaces. */
interface TextOptions {
  tabs: boolean;
}

const GAP = "   ";

/** A grid's rows as text lines: each row as tall as its tallest cell, columns padded to their widest line (or tab-separated). */
function gridLines(rows: string[][], { tabs }: TextOptions): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, column) => (widths[column] = Math.max(widths[column] ?? 0, ...cell.split("\n").map((line) => line.length))));
  const lines: string[] = [];
  for (const row of rows) {
    const cells = row.map((cell) => cell.split("\n"));
    const height = Math.max(...cells.map((cell) => cell.length));
    for (let index = 0; index < height; index++) {
      const parts = cells.map((cell) => cell[index] ?? "");
      lines.push(
        tabs
          ? parts.join("\t")
          : parts
              .map((part, column) => part.padEnd(widths[column]!))
              .join(GAP)
              .trimEnd(),
      );
    }
  }
  return lines;
}

function blockLines(block: Block, options: TextOptions): string[] {
  if (block.kind === "text") return block.lines;
  if (block.kind === "grid") return gridLines(block.rows, options);
  return ["", ""];
}

/** The invoice as a plain-text file: the letterhead, the body's blocks a blank line apart, the footer's cells on one line. */
function plainText(layout: InvoiceLayout, options: TextOptions): Buffer {
  const parts = [layout.header, ...layout.body.map((block) => blockLines(block, options)), layout.footer.length === 0 ? [] : [layout.footer.join(GAP)]];
  return Buffer.from(
    `${parts
      .filter((lines) => lines.length > 0)
      .map((lines) => lines.join("\n"))
      .join("\n\n")}\n`,
  );
}

const html = (value: string) => escapeUTF8(value).replaceAll("\n", "<br>");

/** The invoice as an HTML page: a `<header>`, paragraphs and tables (a ruled grid's first row as `<th>`), a `<footer>`. */
function htmlPage(layout: InvoiceLayout): Buffer {
  const body = layout.body
    .map((block) => {
      if (block.kind === "text") return block.lines.map((line) => `<p>${html(line)}</p>`).join("\n");
      if (block.kind === "page-break") return '<hr style="page-break-after: always">';
      return `<table${block.ruled ? ' border="1"' : ""}>${block.rows.map((row) => `<tr>${row.map((cell) => `<td>${html(cell)}</td>`).join("")}</tr>`).join("\n")}</table>`;
    })
    .join("\n");
  const header = layout.header.length === 0 ? "" : `<header>${layout.header.map((line) => `<p>${html(line)}</p>`).join("")}</header>`;
  const footer = layout.footer.length === 0 ? "" : `<footer><p>${layout.footer.map(html).join(" · ")}</p></footer>`;
  return Buffer.from(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Invoice</title></head><body>${header}\n${body}\n${footer}</body></html>`);
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const paragraph = (line: string) => `<w:p><w:r><w:t xml:space="preserve">${escapeUTF8(line)}</w:t></w:r></w:p>`;
const tabbed = (cells: string[]) => `<w:p><w:r>${cells.map((cell) => `<w:t xml:space="preserve">${escapeUTF8(cell)}</w:t>`).join("<w:tab/>")}</w:r></w:p>`;

/** The invoice as a Word document: paragraphs, tables (a cell's lines as its paragraphs), the letterhead in a header part and the footer's cells tab-separated in a footer part. */
function wordDocument(layout: InvoiceLayout): Buffer {
  const body = layout.body
    .map((block) => {
      if (block.kind === "text") return block.lines.map(paragraph).join("");
      if (block.kind === "page-break") return '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';
      const rows = block.rows.map((row) => `<w:tr>${row.map((cell) => `<w:tc>${cell.split("\n").map(paragraph).join("")}</w:tc>`).join("")}</w:tr>`);
      return `<w:tbl>${rows.join("")}</w:tbl>`;
    })
    .join("");
  const parts: Record<string, Uint8Array> = {
    "[Content_Types].xml": strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        + '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    "_rels/.rels": strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    "word/document.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>`),
  };
  if (layout.header.length > 0)
    parts["word/header1.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:hdr ${W}>${layout.header.map(paragraph).join("")}</w:hdr>`);
  if (layout.footer.length > 0) parts["word/footer1.xml"] = strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:ftr ${W}>${tabbed(layout.footer)}</w:ftr>`);
  return Buffer.from(zipSync(parts));
}

const LINE = 14;
const SIZE = 10;
const LEFT = 50;
const PAGE: [number, number] = [595, 842];

/** Draws text at positions on A4 pages: a text layer as a PDF writer lays it out, with ruled grids' cell borders drawn. */
class PdfWriter {
  readonly pdf: PDFDocument;
  readonly font: PDFFont;
  readonly layout: InvoiceLayout;
  #page: PDFPage;
  #y = 0;

  constructor(pdf: PDFDocument, font: PDFFont, layout: InvoiceLayout) {
    this.pdf = pdf;
    this.font = font;
    this.layout = layout;
    this.#page = this.#newPage();
  }

  #newPage(): PDFPage {
    const page = this.pdf.addPage(PAGE);
    this.layout.header.forEach((line, index) => page.drawText(line, { x: LEFT, y: 810 - index * 11, size: 8, font: this.font }));
    let x = LEFT;
    for (const cell of this.layout.footer) {
      page.drawText(cell, { x, y: 30, size: 7, font: this.font });
      x += this.font.widthOfTextAtSize(cell, 7) + 14;
    }
    this.#y = 760;
    this.#page = page;
    return page;
  }

  text(lines: string[]): void {
    for (const line of lines) {
      this.#page.drawText(line, { x: LEFT, y: this.#y, size: SIZE, font: this.font });
      this.#y -= LINE;
    }
    this.#y -= LINE;
  }

  grid(rows: string[][], ruled: boolean): void {
    const widths: number[] = [];
    for (const row of rows) {
      row.forEach((cell, column) => {
        const width = Math.max(...cell.split("\n").map((line) => this.font.widthOfTextAtSize(line, SIZE)));
        widths[column] = Math.max(widths[column] ?? 0, width + 24);
      });
    }
    const starts = widths.map((_, column) => LEFT + widths.slice(0, column).reduce((sum, width) => sum + width, 0));
    const right = starts.at(-1)! + widths.at(-1)!;
    for (const row of rows) {
      const height = Math.max(...row.map((cell) => cell.split("\n").length)) * LINE + 4;
      const top = this.#y + SIZE + 2;
      row.forEach((cell, column) => {
        cell
          .split("\n")
          .forEach((line, index) => this.#page.drawText(line, { x: starts[column]! + 4, y: this.#y - index * LINE, size: SIZE, font: this.font }));
      });
      if (ruled) {
        this.#page.drawLine({ start: { x: LEFT, y: top }, end: { x: right, y: top }, thickness: 0.5 });
        this.#page.drawLine({ start: { x: LEFT, y: top - height }, end: { x: right, y: top - height }, thickness: 0.5 });
        for (const x of [...starts, right]) this.#page.drawLine({ start: { x, y: top }, end: { x, y: top - height }, thickness: 0.5 });
      }
      this.#y -= height;
    }
    this.#y -= LINE;
  }

  pageBreak(): void {
    this.#newPage();
  }
}

async function pdfDocument(layout: InvoiceLayout): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const writer = new PdfWriter(pdf, await pdf.embedFont(StandardFonts.Helvetica), layout);
  for (const block of layout.body) {
    if (block.kind === "text") writer.text(block.lines);
    else if (block.kind === "grid") writer.grid(block.rows, block.ruled);
    else writer.pageBreak();
  }
  return Buffer.from(await pdf.save());
}

/** The invoice written in `format`. */
export async function renderInvoice(layout: InvoiceLayout, format: InvoiceFormat, options: TextOptions = { tabs: false }): Promise<Buffer> {
  if (format === "pdf") return pdfDocument(layout);
  if (format === "docx") return wordDocument(layout);
  if (format === "html") return htmlPage(layout);
  return plainText(layout, options);
}
