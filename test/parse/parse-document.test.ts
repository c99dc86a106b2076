import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { MAX_SHEET_NAMES, ParseError, parseDocument } from "../../src/parse/parse-document.ts";
import { boundText, csvShape, decodeEntities, htmlToText } from "../../src/parse/text.ts";
import { tiffPageCount } from "../../src/parse/tiff.ts";
import { declaringSize, docx, onePagePdf, png, pptx, tiff, xlsx } from "./samples.ts";

const utf8 = (text: string) => Buffer.from(text, "utf8");

describe("parseDocument", () => {
  it("reads a PDF's page count, text and info", async () => {
    const output = await parseDocument("pdf", onePagePdf("Hello invoice 42", "Invoice"));
    expect(output).toMatchObject({ format: "pdf", pageCount: 1, truncated: false, info: { Title: "Invoice" } });
    expect(output.text).toContain("Hello invoice 42");
  });

  it("reads image dimensions, and a TIFF's page count", async () => {
    expect(await parseDocument("png", png(3, 2))).toEqual({ format: "png", width: 3, height: 2 });
    expect(await parseDocument("tiff", tiff(40, 30, 3))).toEqual({ format: "tiff", width: 40, height: 30, pageCount: 3 });
  });

  it("reads a DOCX's text", async () => {
    expect(await parseDocument("docx", docx(["First paragraph", "Second"]))).toEqual({ format: "docx", text: "First paragraph\n\nSecond", truncated: false });
  });

  it("reads an XLSX's sheet names and its shared and inline strings, entities decoded", async () => {
    const workbook = xlsx({
      sheets: [{ name: "Q1 &amp; Q2", inlineStrings: ["inline one"] }, { name: "Notes" }, { name: "Extra", inlineStrings: ["inline three"] }],
      sharedStrings: ["<t>Total</t>", '<r><t>Ri</t></r><r><t xml:space="preserve">ch &lt;b&gt;</t></r>', "<t>漢字</t><rPh sb=\"0\" eb=\"2\"><t>かんじ</t></rPh>", "<t>a_x000D_b</t>"],
    });
    expect(await parseDocument("xlsx", workbook)).toEqual({
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
    const image = declaringSize(Buffer.from(zipSync({ "ppt/presentation.xml": strToU8("<p/>"), "ppt/media/image1.png": png(1, 1) })), "ppt/media/image1.png", 4_000_000_000);
    expect(await parseDocument("pptx", image)).toEqual({ format: "pptx", slideCount: 0, text: "", truncated: false });
  });

  it("cuts a part that inflates past its declared size to that size, never growing it", async () => {
    const workbook = xlsx({ sheets: [{ name: "A", inlineStrings: ["x".repeat(2_000_000)] }] });
    const lying = declaringSize(workbook, "xl/worksheets/sheet1.xml", 100);
    expect(await parseDocument("xlsx", lying)).toEqual({ format: "xlsx", sheetCount: 1, sheetNames: ["A"], text: "", truncated: false });
  });

  it("reads CSV text with its rows and columns", async () => {
    const output = await parseDocument("csv", utf8('name,note,amount\r\nA,"x, y",1\r\nB,"multi\nline",2\r\n'));
    expect(output).toMatchObject({ format: "csv", rows: 3, columns: 3, truncated: false });
  });

  it("reads txt, json and the visible text of html", async () => {
    expect(await parseDocument("txt", utf8("plain"))).toEqual({ format: "txt", text: "plain", truncated: false });
    expect(await parseDocument("json", utf8('{"a":1}'))).toEqual({ format: "json", text: '{"a":1}', truncated: false });
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

  it("truncates text past 1 MB and says so", async () => {
    const output = await parseDocument("txt", utf8("é".repeat(600_000)));
    expect(output.truncated).toBe(true);
    expect(Buffer.byteLength(output.text!)).toBe(1024 * 1024);
  });
});

describe("text helpers", () => {
  it("boundText cuts on a character boundary and drops NUL characters", () => {
    expect(boundText("aé", 2)).toEqual({ text: "a", truncated: true });
    expect(boundText("a\u0000b")).toEqual({ text: "ab", truncated: false });
  });

  it("csvShape counts records, ignoring blank trailing lines and quoted newlines", () => {
    expect(csvShape("")).toEqual({ rows: 0, columns: 0 });
    expect(csvShape('a,b\n"1\n2",3\n\n')).toEqual({ rows: 2, columns: 2 });
  });

  it("decodeEntities decodes XML entities and character references, keeping unknown ones", () => {
    expect(decodeEntities("&lt;a&gt; &amp;amp; &quot;&apos; &#233;&#x1F600; &bogus; &#0;")).toBe("<a> &amp; \"' é😀 &bogus; &#0;");
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
