import { describe, expect, it } from "vitest";
import { ParseError, parseDocument } from "../../src/parse/parse-document.ts";
import { boundText, csvShape, htmlToText } from "../../src/parse/text.ts";
import { tiffPageCount } from "../../src/parse/tiff.ts";
import { docx, onePagePdf, png, tiff } from "./samples.ts";

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
    await expect(parseDocument("xlsx", utf8("PK"))).rejects.toThrow(/does not support xlsx/);
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

  it("htmlToText decodes numeric entities and keeps block breaks", () => {
    expect(htmlToText("<h1>A&#33;</h1><p>B&#x41;</p>")).toBe("A!\nBA");
  });

  it("tiffPageCount stops at a looping IFD chain", () => {
    const looped = tiff(1, 1, 2);
    looped.writeUInt32LE(8, 8 + 30 + 2 + 24); // second IFD points back to the first
    expect(tiffPageCount(looped)).toBe(2);
  });
});
