import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { MAX_SHEET_NAMES, parseDocument } from "../../src/documents/parse/parse-document.ts";
import { ParseError } from "../../src/documents/parse/parse-error.ts";
import { boundText, csvShape, decodeEntities } from "../../src/documents/parse/text.ts";
import { htmlToText } from "../../src/documents/parse/elements/html.ts";
import { tiffPageCount } from "../../src/documents/parse/tiff.ts";
import { encryptedPdf } from "./hostile-samples.ts";
import { declaringSize, docx, docxOfBody, onePagePdf, png, pptx, rawZip, type RawZipEntry, storedEntry, tiff, xlsx, zerosEntry } from "./samples.ts";

const utf8 = (text: string) => Buffer.from(text, "utf8");

describe("parseDocument", () => {
  it("reads a PDF's page count, text and info", async () => {
    const output = await parseDocument("pdf", onePagePdf("Hello invoice 42", "Invoice"));
    expect(output).toMatchObject({ format: "pdf", pageCount: 1, truncated: false, info: { Title: "Invoice" }, ocrPages: [] });
    expect(output.text).toContain("Hello invoice 42");
  });

  it("reads image dimensions, and a TIFF's page count (OCR off)", async () => {
    expect(await parseDocument("png", png(3, 2), { ocr: "never" })).toEqual({ format: "png", width: 3, height: 2 });
    expect(await parseDocument("tiff", tiff(40, 30, 3), { ocr: "never" })).toEqual({ format: "tiff", width: 40, height: 30, pageCount: 3 });
  });

  it("reads a DOCX's text", async () => {
    expect(await parseDocument("docx", docx(["First paragraph", "Second"]))).toEqual({
      format: "docx",
      text: "First paragraph\n\nSecond",
      truncated: false,
      elements: [
        { type: "NarrativeText", text: "First paragraph" },
        { type: "NarrativeText", text: "Second" },
      ],
      markdown: "First paragraph\n\nSecond",
    });
  });

  it("reads a DOCX's paragraphs, runs, tabs, breaks and entities, without tab stops or text-box fallbacks", async () => {
    const body =
      '<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Name</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve">Tom &amp; Jerry </w:t></w:r></w:p>'
      + "<w:p><w:r><w:t>line one</w:t><w:br/><w:t>line two</w:t><w:cr/><w:t>&lt;three&gt; &#233;</w:t></w:r></w:p>"
      + "<w:p/>"
      + "<w:p><w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></mc:Choice>"
      + "<mc:Fallback><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>after</w:t></w:r></w:p>";
    expect(await parseDocument("docx", docxOfBody(body))).toMatchObject({
      format: "docx",
      text: "Name\tTom & Jerry \n\nline one\nline two\n<three> é\n\n\n\nafter\n\nboxed",
      truncated: false,
    });
    await expect(parseDocument("docx", xlsx({ sheets: [] }))).rejects.toThrow("cannot parse the docx document: it has no word/document.xml");
  });

  it("reads an XLSX's sheet names and its shared and inline strings, entities decoded", async () => {
    const workbook = xlsx({
      sheets: [{ name: "Q1 &amp; Q2", inlineStrings: ["inline one"] }, { name: "Notes" }, { name: "Extra", inlineStrings: ["inline three"] }],
      sharedStrings: [
        "<t>Total</t>",
        '<r><t>Ri</t></r><r><t xml:space="preserve">ch &lt;b&gt;</t></r>',
        '<t>漢字</t><rPh sb="0" eb="2"><t>かんじ</t></rPh>',
        "<t>a_x000D_b</t>",
      ],
    });
    expect(await parseDocument("xlsx", workbook)).toMatchObject({
      format: "xlsx",
      sheetCount: 3,
      sheetNames: ["Q1 & Q2", "Notes", "Extra"],
      text: "Total\nRich <b>\n漢字\na\rb\ninline one\ninline three",
      truncated: false,
    });
  });

  it("lists at most MAX_SHEET_NAMES sheet names, but counts every sheet", async () => {
    const sheets = Array.from({ length: MAX_SHEET_NAMES + 5 }, (_, index) => ({ name: `S${index + 1}` }));
    const output = await parseDocument("xlsx", xlsx({ sheets }));
    expect(output.sheetCount).toBe(MAX_SHEET_NAMES + 5);
    expect(output.sheetNames).toHaveLength(MAX_SHEET_NAMES);
    expect(output.text).toBe("");
  });

  it("reads a PPTX's slide count and the text of each slide's runs, in slide order", async () => {
    const slides = Array.from({ length: 11 }, (_, index) => [[`Slide ${index + 1}`]]);
    slides[0] = [["Hel", "lo"], ["Tom &amp; Jerry"]];
    slides[1] = [];
    const output = await parseDocument("pptx", pptx(slides));
    expect(output).toMatchObject({ format: "pptx", slideCount: 11, truncated: false });
    // slide2 is empty; slide10 comes after slide9, not after slide1.
    const rest = Array.from({ length: 9 }, (_, index) => `Slide ${index + 3}`);
    expect(output.text).toBe(["Hello\nTom & Jerry", ...rest].join("\n\n"));
  });

  it("refuses an XLSX or PPTX whose parts declare more than 50 MB inflated, as a zip bomb", async () => {
    const bomb = declaringSize(xlsx({ sheets: [{ name: "A" }] }), "xl/worksheets/sheet1.xml", 51 * 1024 * 1024);
    await expect(parseDocument("xlsx", bomb)).rejects.toBeInstanceOf(ParseError);
    await expect(parseDocument("xlsx", bomb)).rejects.toThrow("cannot parse the xlsx document: its parts inflate to more than 50 MB");
    // Each slide under the limit, together over it.
    const slides = declaringSize(declaringSize(pptx([[["a"]], [["b"]]]), "ppt/slides/slide1.xml", 30 * 1024 * 1024), "ppt/slides/slide2.xml", 30 * 1024 * 1024);
    await expect(parseDocument("pptx", slides)).rejects.toThrow(/cannot parse the pptx document: its parts inflate to more than 50 MB/);
    // A part it does not read may declare anything.
    const image = declaringSize(
      Buffer.from(zipSync({ "ppt/presentation.xml": strToU8("<p/>"), "ppt/media/image1.png": png(1, 1) })),
      "ppt/media/image1.png",
      4_000_000_000,
    );
    expect(await parseDocument("pptx", image)).toEqual({ format: "pptx", slideCount: 0, text: "", truncated: false, elements: [], markdown: "" });
  });

  it("refuses a part that inflates to other than its declared size, as corrupt", async () => {
    const workbook = xlsx({ sheets: [{ name: "A", inlineStrings: ["x".repeat(2_000_000)] }] });
    const lying = declaringSize(workbook, "xl/worksheets/sheet1.xml", 100);
    await expect(parseDocument("xlsx", lying)).rejects.toThrow(
      /cannot parse the xlsx document: its part xl\/worksheets\/sheet1.xml is corrupt: it declares 100 bytes but holds \d+/,
    );
  });

  it("reads CSV text with its rows and columns", async () => {
    const output = await parseDocument("csv", utf8('name,note,amount\r\nA,"x, y",1\r\nB,"multi\nline",2\r\n'));
    expect(output).toMatchObject({ format: "csv", rows: 3, columns: 3, truncated: false });
  });

  it("reads txt, json and the visible text of html", async () => {
    expect(await parseDocument("txt", utf8("plain"))).toEqual({
      format: "txt",
      text: "plain",
      truncated: false,
      encoding: "utf-8",
      encodingSource: "default",
      elements: [{ type: "Title", text: "plain", level: 1 }],
      markdown: "# plain",
    });
    expect(await parseDocument("json", utf8('{"a":1}'))).toEqual({
      format: "json",
      text: '{"a":1}',
      truncated: false,
      encoding: "utf-8",
      encodingSource: "default",
    });
    const html = await parseDocument("html", utf8("<html><style>p{}</style><p>Tom &amp; Jerry</p><script>x()</script></html>"));
    expect(html.text).toBe("Tom & Jerry");
  });

  it("fails with a clear ParseError on a document it cannot read", async () => {
    await expect(parseDocument("pdf", utf8("%PDF-1.4 not really"))).rejects.toThrow(ParseError);
    await expect(parseDocument("pdf", utf8("garbage"))).rejects.toThrow(/cannot parse the pdf document/);
    await expect(parseDocument("png", utf8("garbage"))).rejects.toThrow(/cannot parse the png document/);
    await expect(parseDocument("docx", utf8("garbage"))).rejects.toThrow(/cannot parse the docx document/);
    await expect(parseDocument("json", utf8("{oops"))).rejects.toThrow(/cannot parse the json document/);
    await expect(parseDocument("txt", Buffer.from([0xff, 0xfe, 0x00]))).rejects.toThrow(/cannot parse the txt document/);
    await expect(parseDocument("xlsx", utf8("PK"))).rejects.toThrow(/cannot parse the xlsx document/);
    await expect(parseDocument("xlsx", docx(["not a workbook"]))).rejects.toThrow("cannot parse the xlsx document: it has no xl/workbook.xml");
    await expect(parseDocument("pptx", xlsx({ sheets: [] }))).rejects.toThrow("cannot parse the pptx document: it has no ppt/presentation.xml");
    await expect(parseDocument("zip", utf8("PK"))).rejects.toThrow(/does not support zip/);
  });

  it("tells an encrypted document, a corrupt one and an unsupported format apart by code", async () => {
    await expect(parseDocument("pdf", encryptedPdf())).rejects.toMatchObject({
      code: "document_encrypted",
      message: "the PDF is encrypted with a password; send it without the password protection",
    });
    await expect(parseDocument("docx", rawZip([{ ...storedEntry("word/document.xml", "<x/>"), flags: 0x1 }]))).rejects.toMatchObject({
      code: "document_encrypted",
    });
    await expect(parseDocument("pdf", utf8("%PDF-1.4 not really"))).rejects.toMatchObject({ code: "document_corrupt" });
    await expect(parseDocument("json", utf8("{oops"))).rejects.toMatchObject({ code: "document_corrupt" });
    await expect(parseDocument("zip", utf8("PK"))).rejects.toMatchObject({ code: "format_unsupported" });
  });

  it("truncates text past 1 MB and says so", async () => {
    const output = await parseDocument("txt", utf8("é".repeat(600_000)));
    expect(output.truncated).toBe(true);
    expect(Buffer.byteLength(output.text!)).toBe(1024 * 1024);
  });
});

const MB = 1024 * 1024;

/** A package of each OOXML format whose main part is `part`, beside the parts the format requires. */
const packages: [format: string, build: (part: (name: string) => RawZipEntry) => Buffer][] = [
  ["docx", (part) => rawZip([part("word/document.xml")])],
  ["xlsx", (part) => rawZip([storedEntry("xl/workbook.xml", '<workbook><sheets><sheet name="A"/></sheets></workbook>'), part("xl/worksheets/sheet1.xml")])],
  ["pptx", (part) => rawZip([storedEntry("ppt/presentation.xml", "<p:presentation/>"), part("ppt/slides/slide1.xml")])],
];

/** Milliseconds `parseDocument` takes to reject, and the error. */
async function timeRejection(format: string, bytes: Uint8Array): Promise<{ elapsed: number; error: unknown }> {
  const started = performance.now();
  const error = await parseDocument(format, bytes).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { elapsed: performance.now() - started, error };
}

describe("bounded reading of OOXML packages", () => {
  it.each(packages)("refuses a %s part that declares 100 bytes but inflates past 50 MB, fast", async (format, build) => {
    const { elapsed, error } = await timeRejection(
      format,
      build((name) => zerosEntry(name, 60 * MB, 100)),
    );
    expect(error).toBeInstanceOf(ParseError);
    expect((error as Error).message).toBe(`cannot parse the ${format} document: its parts inflate to more than 50 MB`);
    expect(elapsed).toBeLessThan(2000);
  });

  it.each(packages)("refuses a %s part that honestly declares 60 MB, before inflating it", async (format, build) => {
    const { elapsed, error } = await timeRejection(
      format,
      build((name) => zerosEntry(name, 60 * MB)),
    );
    expect((error as Error).message).toBe(`cannot parse the ${format} document: its parts inflate to more than 50 MB`);
    expect(elapsed).toBeLessThan(2000);
  });

  it("counts every part against one budget: an honest 30 MB slide, then one lying about its 30 MB, are refused", async () => {
    const slides = rawZip([
      storedEntry("ppt/presentation.xml", "<p/>"),
      zerosEntry("ppt/slides/slide1.xml", 30 * MB),
      zerosEntry("ppt/slides/slide2.xml", 30 * MB, 100),
    ]);
    const { elapsed, error } = await timeRejection("pptx", slides);
    expect((error as Error).message).toBe("cannot parse the pptx document: its parts inflate to more than 50 MB");
    expect(elapsed).toBeLessThan(2000);
  });

  it.each(packages)("refuses an encrypted %s part", async (format, build) => {
    const encrypted = build((name) => ({ ...storedEntry(name, "<x/>"), flags: 0x1 }));
    await expect(parseDocument(format, encrypted)).rejects.toThrow(/^cannot parse the \w+ document: its part [\w/]+\.xml is encrypted$/);
  });

  it("refuses compression methods other than stored and deflated, and ZIP64 sizes", async () => {
    const bzip2 = rawZip([{ ...storedEntry("word/document.xml", "<x/>"), method: 12 }]);
    await expect(parseDocument("docx", bzip2)).rejects.toThrow(
      "cannot parse the docx document: its part word/document.xml uses zip compression method 12, which is not supported",
    );
    const zip64 = rawZip([{ ...storedEntry("word/document.xml", "<x/>"), size: 0xffffffff }]);
    await expect(parseDocument("docx", zip64)).rejects.toThrow("cannot parse the docx document: it is a ZIP64 archive, which is not supported");
  });

  it("refuses entries that share their compressed data, which would inflate one small archive many times", async () => {
    const single = rawZip([storedEntry("ppt/presentation.xml", "<p/>"), storedEntry("ppt/slides/slide1.xml", "<a:t>a</a:t>".repeat(1000))]);
    await expect(parseDocument("pptx", repeatLastEntry(single, 100))).rejects.toThrow("cannot parse the pptx document: its entries overlap");
  });

  it.each([
    ["docx", rawZip([storedEntry("word/document.xml", "<w:t ".repeat(200_000) + "<w:t>".repeat(200_000))])],
    ["xlsx", rawZip([storedEntry("xl/workbook.xml", `<sheet${' name="'.repeat(200_000)}>`), storedEntry("xl/sharedStrings.xml", "<si><t>".repeat(200_000))])],
    ["pptx", rawZip([storedEntry("ppt/presentation.xml", "<p/>"), storedEntry("ppt/slides/slide1.xml", "<a:t>".repeat(200_000) + "<a:br ".repeat(200_000))])],
  ])("scans %s parts full of unclosed tags in linear time", async (format, bytes) => {
    const started = performance.now();
    // Nesting deeper than a document has is refused as corrupt; either way the answer comes at once.
    await parseDocument(format, bytes).catch((error: unknown) =>
      expect(error).toMatchObject({ code: "document_corrupt", message: expect.stringMatching(/nests deeper than 512/) }),
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("refuses what is not a zip archive, or has a corrupt directory", async () => {
    await expect(parseDocument("docx", utf8("garbage"))).rejects.toThrow("cannot parse the docx document: it is not a zip archive");
    const archive = docx(["a"]);
    archive.writeUInt32LE(0, archive.length - 22 + 16); // central directory offset -> a local header
    await expect(parseDocument("docx", archive)).rejects.toThrow("cannot parse the docx document: its zip central directory is corrupt");
  });
});

/** `zip` (from rawZip, no comment) with its last central directory record listed `times` times, all pointing at the same data. */
function repeatLastEntry(zip: Buffer, times: number): Buffer {
  const end = zip.length - 22;
  const directoryStart = zip.readUInt32LE(end + 16);
  let last = directoryStart;
  for (let at = directoryStart; at < end; at += 46 + zip.readUInt16LE(at + 28)) last = at;
  const record = zip.subarray(last, end);
  const directory = Buffer.concat([zip.subarray(directoryStart, end), ...Array.from({ length: times - 1 }, () => record)]);
  const trailer = Buffer.from(zip.subarray(end));
  const count = zip.readUInt16LE(end + 10) + times - 1;
  trailer.writeUInt16LE(count, 8);
  trailer.writeUInt16LE(count, 10);
  trailer.writeUInt32LE(directory.length, 12);
  return Buffer.concat([zip.subarray(0, directoryStart), directory, trailer]);
}

describe("text helpers", () => {
  it("boundText cuts on a character boundary", () => {
    expect(boundText("aé", 2)).toEqual({ text: "a", truncated: true });
  });

  it("csvShape counts records, ignoring blank trailing lines and quoted newlines", () => {
    expect(csvShape("")).toEqual({ rows: 0, columns: 0 });
    expect(csvShape('a,b\n"1\n2",3\n\n')).toEqual({ rows: 2, columns: 2 });
  });

  it("decodeEntities decodes XML entities and character references, keeping unknown ones", () => {
    expect(decodeEntities("&lt;a&gt; &amp;amp; &quot;&apos; &#233;&#x1F600; &bogus; &#0;")).toBe("<a> &amp; \"' é😀 &bogus; &#0;");
  });

  it("htmlToText drops scripts, styles and comments whatever their case, and keeps the text around them", () => {
    expect(htmlToText("a<SCRIPT type=x>var s = '<p>';</script >b<style>p{}</STYLE>c<!-- <p>hidden</p> -->d")).toBe("a b c d");
    expect(htmlToText("text <script>never closed")).toBe("text");
  });

  it("htmlToText takes linear time on hostile markup (unclosed tags, scripts, comments)", () => {
    for (const hostile of ["<script".repeat(200_000), "<".repeat(1_000_000), "<a ".repeat(300_000), "<!--".repeat(200_000), "<style>".repeat(150_000)]) {
      const started = performance.now();
      htmlToText(hostile);
      // Linear takes tens of milliseconds; quadratic, on these sizes, minutes. The bound leaves a loaded machine room.
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });

  it("htmlToText decodes numeric entities and keeps block breaks", () => {
    expect(htmlToText("<h1>A&#33;</h1><p>B&#x41;</p>")).toBe("A!\nBA");
  });

  it("tiffPageCount stops at a looping IFD chain", () => {
    const looped = tiff(1, 1, 2);
    looped.writeUInt32LE(8, 8 + 30 + 2 + 24); // second IFD points back to the first
    expect(tiffPageCount(looped)).toBe(2);
  });
});

describe("text in other encodings is decoded for parsing", () => {
  const utf16le = (value: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(value, "utf16le")]);

  it("a UTF-16 CSV (as spreadsheet programs save 'Unicode text') gives the right rows and columns", async () => {
    const output = await parseDocument("csv", utf16le('name,city,note\r\nZoë,Zürich,"a, b"\r\nLi,北京,😀\r\n'), { contentType: "text/csv" });
    expect(output).toMatchObject({
      format: "csv",
      rows: 3,
      columns: 3,
      text: 'name,city,note\r\nZoë,Zürich,"a, b"\r\nLi,北京,😀\r\n',
      truncated: false,
      encoding: "utf-16le",
      encodingSource: "bom",
    });
    expect(output.elements?.[0]?.table?.rows).toEqual([
      ["name", "city", "note"],
      ["Zoë", "Zürich", "a, b"],
      ["Li", "北京", "😀"],
    ]);
  });

  it("a windows-1252 CSV without a byte order mark or declared charset is decoded in the encoding detected from its bytes", async () => {
    // windows-1252 is latin1 but for 0x80-0x9f, where "€" is 0x80.
    const text = "Name,Ville,Prix\r\nCafé crème,Besançon,3 €\r\nNaïve théière,Orléans,12 €\r\nPâté,Nîmes,7 €\r\n";
    const csv = Buffer.from(text.replace(/€/g, "\u0080"), "latin1");
    const output = await parseDocument("csv", csv, { contentType: "text/csv" });
    expect(output).toMatchObject({ format: "csv", rows: 4, columns: 3, encoding: "windows-1252", encodingSource: "detected" });
    expect(output.text).toContain("Café crème,Besançon,3 €");
  });

  it("UTF-16 BE and UTF-32 LE and BE", async () => {
    expect(await parseDocument("txt", Buffer.from(utf16le("héllo 😀")).swap16())).toMatchObject({ text: "héllo 😀", encoding: "utf-16be" });
    const utf32 = (little: boolean) => {
      const codes = [0xfeff, ...[...'{"a":"😀"}'].map((char) => char.codePointAt(0)!)];
      const bytes = Buffer.alloc(codes.length * 4);
      codes.forEach((code, index) => (little ? bytes.writeUInt32LE(code, index * 4) : bytes.writeUInt32BE(code, index * 4)));
      return bytes;
    };
    expect(await parseDocument("json", utf32(true))).toMatchObject({ text: '{"a":"😀"}', encoding: "utf-32le" });
    expect(await parseDocument("json", utf32(false))).toMatchObject({ text: '{"a":"😀"}', encoding: "utf-32be" });
  });

  it("a windows-1252 HTML page with a meta charset, and a charset from the stored Content-Type", async () => {
    const html = Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>Café \x80 5</p></body></html>', "latin1");
    expect(await parseDocument("html", html)).toMatchObject({ format: "html", text: "Café € 5", truncated: false, encoding: "windows-1252" });
    expect(await parseDocument("txt", Buffer.from("Zoë", "latin1"), { contentType: "text/plain; charset=iso-8859-1" })).toMatchObject({
      text: "Zoë",
      encoding: "windows-1252",
    });
  });
});
