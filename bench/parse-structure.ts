import { extractText, getDocumentProxy, getMeta } from "unpdf";
import { parseDocument } from "../src/documents/parse/parse-document.ts";
import { type BoundedText, boundText, decodeEntities } from "../src/documents/parse/text.ts";
import { decodeText, META_PRESCAN_BYTES, textEncoding } from "../src/documents/formats/encoding.ts";
import { readParts } from "../src/documents/parse/zip.ts";
import { docxOfBody, placedTextPdf } from "../test/parse/samples.ts";
import { median } from "./support/median.ts";
import type { BenchRow } from "./support/report.ts";

// Parse with elements and Markdown (what a parse step runs in its pool process) against the
// text-only parse of the previous round, measured in the same run on the same documents, one
// document at a time in this process, in alternating rounds: pages/s for a 20-page text PDF,
// documents/s for DOCX and HTML.

const ROUNDS = 9;
const ROUND_MS = 700;
const PAGES = 20;

/** A 20-page PDF: per page a heading, two columns of 40 lines and a page number. */
function twentyPagePdf(): Buffer {
  return placedTextPdf(
    Array.from({ length: PAGES }, (_, page) => [
      { x: 72, y: 740, size: 18, text: `Section ${page + 1}` },
      ...Array.from({ length: 40 }, (_, line) => [
        { x: 72, y: 700 - line * 14, size: 10, text: `Left column line ${line} of page ${page + 1} with some words` },
        { x: 320, y: 700 - line * 14, size: 10, text: `Right column line ${line} carries more running text` },
      ]).flat(),
      { x: 300, y: 30, size: 9, text: String(page + 1) },
    ]),
  );
}

/** A DOCX of 200 paragraphs under headings, with a table. */
function docxDocument(): Buffer {
  const paragraph = (text: string, style = "") =>
    `<w:p>${style === "" ? "" : `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>`}<w:r><w:t>${text}</w:t></w:r></w:p>`;
  const body = Array.from({ length: 20 }, (_, section) =>
    [
      paragraph(`Heading ${section}`, "Heading1"),
      ...Array.from({ length: 10 }, (_, index) => paragraph(`Paragraph ${index} of section ${section}, long enough to be a sentence of body text.`)),
    ].join(""),
  ).join("");
  const table = `<w:tbl>${Array.from({ length: 20 }, (_, row) => `<w:tr>${[1, 2, 3].map((column) => `<w:tc>${paragraph(`r${row}c${column}`)}</w:tc>`).join("")}</w:tr>`).join("")}</w:tbl>`;
  return docxOfBody(body + table);
}

/** An HTML page of 200 paragraphs under headings, lists and a table. */
function htmlDocument(): Buffer {
  const sections = Array.from(
    { length: 20 },
    (_, section) =>
      `<h2>Section ${section}</h2>${Array.from({ length: 8 }, (_, index) => `<p>Paragraph ${index} of section ${section} with <b>some</b> text.</p>`).join("")}<ul><li>one</li><li>two</li></ul>`,
  );
  const table = `<table>${Array.from({ length: 20 }, (_, row) => `<tr><td>r${row}</td><td>${row * 3}</td></tr>`).join("")}</table>`;
  return Buffer.from(`<!doctype html><html><body><header>Site</header>${sections.join("")}${table}<footer>(c)</footer></body></html>`);
}

/** The previous round's PDF parse: unpdf's text per page and the document information. */
async function pdfTextOnly(bytes: Buffer): Promise<void> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, verbosity: 0 });
  await extractText(pdf, { mergePages: false });
  await getMeta(pdf);
  await pdf.destroy();
}

/** The text runs and paragraph ends of a Word part: a shortcut of docxTextOnly, the DOCX baseline before 2026-11-27. */
function docxRunsOnly(bytes: Buffer): void {
  const xml = readParts(bytes, (name) => name === "word/document.xml").get("word/document.xml") ?? "";
  [...xml.matchAll(/<w:t(?:\s[^<>]*)?>([^<]*)<\/w:t>|<\/w:p>/g)].map((match) => match[1] ?? "\n\n").join("");
}

/** The WordprocessingML elements the previous round's DOCX parse read (its own expression). */
const DOCUMENT_TOKEN = /<w:t(?:\s[^<>]*)?>([^<]*)<\/w:t>|<(\/?)(w:p|w:pPr|w:tab|w:br|w:cr|mc:Fallback)(?:\s[^<>]*)?\/?>/g;

/**
 * The previous round's DOCX parse, as it was (src/documents/parse/ooxml.ts before elements): the document
 * part inflated, its text runs with their entities decoded, tabs and breaks, paragraphs joined by
 * a blank line, the text bounded (today's boundText, which is faster than that round's).
 */
function docxTextOnly(bytes: Buffer): BoundedText {
  const xml = readParts(bytes, (name) => name === "word/document.xml").get("word/document.xml");
  if (xml === undefined) throw new Error("it has no word/document.xml");
  const paragraphs: string[] = [];
  let paragraph = "";
  let inProperties = false;
  let fallbackDepth = 0;
  for (const [tag, text, closing, name] of xml.matchAll(DOCUMENT_TOKEN)) {
    const selfClosing = tag.endsWith("/>");
    if (name === "mc:Fallback" && !selfClosing) fallbackDepth = Math.max(0, fallbackDepth + (closing ? -1 : 1));
    else if (fallbackDepth > 0) continue;
    else if (name === "w:pPr") inProperties = !closing && !selfClosing;
    else if (text !== undefined) paragraph += decodeEntities(text);
    else if (name === "w:tab" && !inProperties) paragraph += "\t";
    else if (name === "w:br" || name === "w:cr") paragraph += "\n";
    else if (name === "w:p" && (closing || selfClosing)) {
      paragraphs.push(paragraph);
      paragraph = "";
    }
  }
  if (paragraph !== "") paragraphs.push(paragraph);
  return boundText(paragraphs.join("\n\n").trim());
}

const HIDDEN_ELEMENTS = new Set(["script", "style", "template"]);
const BLOCK_ELEMENTS = new Set(["p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer", "table"]);
const TAG_NAME = /^\/?([a-z][a-z0-9-]*)/i;

/**
 * The previous round's HTML parse, as it was (parseHtml, htmlToText): the bytes decoded in the
 * encoding a byte order mark, the Content-Type or a meta charset declares, else UTF-8; the visible
 * text, found tag by tag with indexOf; the text bounded.
 */
function htmlTextOnly(bytes: Buffer): BoundedText {
  const encoding = textEncoding(bytes.subarray(0, META_PRESCAN_BYTES), "text/html", true);
  if (encoding === undefined) throw new Error("no encoding");
  return boundText(htmlToText(decodeText(bytes, encoding.name)));
}

function htmlToText(html: string): string {
  const parts: string[] = [];
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf("<", at);
    if (open === -1) {
      parts.push(html.slice(at));
      break;
    }
    parts.push(html.slice(at, open));
    if (html.startsWith("<!--", open)) {
      const end = html.indexOf("-->", open + 4);
      parts.push(" ");
      at = end === -1 ? html.length : end + 3;
      continue;
    }
    const close = html.indexOf(">", open + 1);
    if (close === -1) break;
    const tag = html.slice(open + 1, close);
    const name = TAG_NAME.exec(tag)?.[1]?.toLowerCase() ?? "";
    at = close + 1;
    if (HIDDEN_ELEMENTS.has(name) && !tag.startsWith("/")) {
      const closer = new RegExp(`</${name}\\s*>`, "gi");
      closer.lastIndex = at;
      const match = closer.exec(html);
      at = match === null ? html.length : match.index + match[0].length;
      parts.push(" ");
      continue;
    }
    parts.push(BLOCK_ELEMENTS.has(name) ? "\n" : " ");
  }
  return decodeEntities(parts.join(""))
    .replace(/[ \t\r\f\v]+/g, " ")
    .replace(/ *\n\s*/g, "\n")
    .trim();
}

/** Documents per second for `parse`, one after another for ROUND_MS. */
async function rate(parse: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  let done = 0;
  while (performance.now() - started < ROUND_MS) {
    await parse();
    done++;
  }
  return done / ((performance.now() - started) / 1000);
}

/**
 * Both parses' rates in ROUNDS alternating rounds, and the median of the rounds' ratios: this
 * machine's speed drifts over seconds (another process, the host), and a round of each, side by
 * side, sees the same drift.
 */
async function alternating(textOnly: () => Promise<unknown> | unknown, structured: () => Promise<unknown> | unknown) {
  await textOnly(); // warm up
  await structured();
  const before: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    before.push(await rate(textOnly));
    after.push(await rate(structured));
  }
  return { before: median(before), after: median(after), ratio: median(after.map((rate, round) => rate / before[round]!)) };
}

export async function benchParseStructure(): Promise<BenchRow[]> {
  const pdf = twentyPagePdf();
  const docx = docxDocument();
  const html = htmlDocument();
  const cases: [name: string, unit: string, scale: number, structured: () => Promise<unknown>, textOnly: () => Promise<unknown> | unknown][] = [
    ["20-page text PDF", "pages/s", PAGES, () => parseDocument("pdf", pdf, { ocr: "never" }), () => pdfTextOnly(pdf)],
    ["DOCX (200 paragraphs, a table)", "documents/s", 1, () => parseDocument("docx", docx), () => docxTextOnly(docx)],
    ["HTML (200 paragraphs, lists, a table)", "documents/s", 1, () => parseDocument("html", html, { contentType: "text/html" }), () => htmlTextOnly(html)],
  ];
  const rows: BenchRow[] = [];
  for (const [name, unit, scale, structured, textOnly] of cases) {
    const { before, after, ratio } = await alternating(textOnly, structured);
    rows.push(
      { name: `parse ${name}, text only (previous round)`, value: Math.round(before * scale * 10) / 10, unit },
      { name: `parse ${name}, with elements and Markdown`, value: Math.round(after * scale * 10) / 10, unit },
      {
        name: `parse ${name}: with structure / text only, median of ${ROUNDS} alternating rounds`,
        value: Math.round(ratio * 100) / 100,
        unit: "ratio",
        target: { op: ">=", value: 0.7 },
      },
    );
  }
  // Sessions before 2026-11-27 measured DOCX against a shortcut of that parse (text runs and
  // paragraph ends only, no entities, tabs, breaks or bound); shown beside it, with no target.
  const shortcut = await alternating(
    () => docxRunsOnly(docx),
    () => parseDocument("docx", docx),
  );
  rows.push({
    name: `parse DOCX (200 paragraphs, a table): with structure / text runs only (the baseline before 2026-11-27), median of ${ROUNDS} alternating rounds`,
    value: Math.round(shortcut.ratio * 100) / 100,
    unit: "ratio",
  });
  // A parse node's ruling_lines setting reads each text page's drawing too (pdf.js's operator list),
  // for tables drawn with lines; off by default, its cost is shown with no target.
  const ruled = await alternating(
    () => pdfTextOnly(pdf),
    () => parseDocument("pdf", pdf, { ocr: "never", rulingLines: true }),
  );
  rows.push({
    name: `parse 20-page text PDF with ruling_lines: with structure / text only, median of ${ROUNDS} alternating rounds`,
    value: Math.round(ruled.ratio * 100) / 100,
    unit: "ratio",
  });
  return rows;
}
