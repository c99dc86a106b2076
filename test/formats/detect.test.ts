import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { strToU8, zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  acceptance,
  declaredTextFormat,
  detectFormat,
  extension,
  FormatSniffer,
  HEAD_BYTES,
  mediaType,
  type Detection,
} from "../../src/documents/formats/detect.ts";
import { FORMAT_IDS } from "../../src/documents/formats/format-ids.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { docx, heic, jpeg, pdf, png, pptx, SAMPLES, tiff, xlsx, zip } from "./fixtures.ts";

let root: string;
let store: FileStore;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "docpipe-formats-"));
  store = new FileStore(root);
  await store.init();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Declared {
  fileName?: string;
  contentType?: string;
  chunkSize?: number;
}

/** Runs bytes through the edge's path: staged by FileStore while a sniffer sees each chunk, then detected. */
async function detect(
  bytes: Uint8Array,
  { fileName = "upload", contentType = "application/octet-stream", chunkSize = 16 * 1024 }: Declared = {},
): Promise<Detection> {
  const declared = declaredTextFormat(contentType, fileName);
  const sniffer = new FormatSniffer(declared !== undefined, { contentType, html: declared === "html" });
  const chunks = Array.from({ length: Math.ceil(bytes.length / chunkSize) }, (_, i) => Buffer.from(bytes.subarray(i * chunkSize, (i + 1) * chunkSize)));
  const staged = await store.stage(Readable.from(chunks), Number.MAX_SAFE_INTEGER, (chunk) => sniffer.push(chunk));
  try {
    return await detectFormat({ ...sniffer.result(), path: staged.tempPath, fileName, contentType });
  } finally {
    await store.discard(staged);
  }
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const unsupported = (detectedFormat: string | null): Detection => ({ format: undefined, detectedFormat });

describe("each format is detected from its bytes", () => {
  test.each(FORMAT_IDS)("%s", async (format) => {
    const { bytes, fileName, contentType } = SAMPLES[format];
    expect(await detect(bytes, { fileName, contentType })).toEqual({ format, detectedFormat: format });
  });

  test.each(FORMAT_IDS.filter((format) => !["txt", "csv", "json", "html", "md", "eml"].includes(format)))(
    "%s needs neither a name nor a declared type",
    async (format) => {
      expect((await detect(SAMPLES[format].bytes)).format).toBe(format);
    },
  );
});

describe("files larger than the head are detected from the staged file", () => {
  test("a TIFF whose image directory lies past the head", async () => {
    const tall = tiff(HEAD_BYTES * 2);
    expect(new DataView(tall.buffer).getUint32(4, true)).toBeGreaterThan(HEAD_BYTES);
    expect((await detect(tall)).format).toBe("tiff");
  });

  test("a docx whose [Content_Types].xml lies past the head", async () => {
    const withThumbnail = docx({ "docProps/thumbnail.jpeg": [randomBytes(HEAD_BYTES * 2), { level: 0 }] });
    expect((await detect(withThumbnail)).format).toBe("docx");
  });

  test("a PDF of several megabytes", async () => {
    const large = Buffer.concat([pdf(), Buffer.alloc(3 * 1024 * 1024, "% padding comment line\n")]);
    expect((await detect(large)).format).toBe("pdf");
  });

  test("a zip whose head looks like an Office document by its folder names alone is judged by its entries", async () => {
    const plainZip = zipSync({ "xl/data.bin": [randomBytes(HEAD_BYTES * 2), { level: 0 }], "notes.txt": strToU8("not a workbook") });
    expect(await detect(plainZip, { fileName: "book.xlsx" })).toEqual(unsupported("zip"));
  });

  test("a large file its head decides (a PDF, a JPEG) is detected without reading the staged file again", async () => {
    for (const [bytes, format] of [
      [pdf(), "pdf"],
      [jpeg(), "jpeg"],
    ] as const) {
      const head = Buffer.concat([bytes, Buffer.alloc(HEAD_BYTES - bytes.length)]);
      const detection = await detectFormat({ head, complete: false, text: false, path: "/nonexistent/staged-file", fileName: "upload", contentType: "" });
      expect(detection.format).toBe(format);
    }
  });

  test("a text file of several megabytes", async () => {
    const large = text("id,name\n" + "42,Zoë\n".repeat(500_000));
    expect(await detect(large, { fileName: "big.csv" })).toEqual({ format: "csv", detectedFormat: "csv" });
  });
});

describe("never by the name alone", () => {
  test("a file named .pdf holding PNG bytes is png", async () => {
    expect(await detect(png(), { fileName: "report.pdf", contentType: "application/pdf" })).toEqual({ format: "png", detectedFormat: "png" });
  });

  test("a file named .pdf holding random bytes is unknown", async () => {
    expect(await detect(randomBytes(10_000), { fileName: "report.pdf", contentType: "application/pdf" })).toEqual(unsupported(null));
  });

  test("a plain zip named .docx is a zip, which we do not take", async () => {
    expect(await detect(zip(), { fileName: "letter.docx" })).toEqual(unsupported("zip"));
  });

  test("text named and typed as a PDF is no format", async () => {
    expect(await detect(text("just words"), { fileName: "x.pdf", contentType: "application/pdf" })).toEqual(unsupported(null));
  });

  test("text with no text type or extension is no format", async () => {
    expect(await detect(text("just words"), { fileName: "notes", contentType: "application/octet-stream" })).toEqual(unsupported(null));
  });

  test("bytes of a supported binary format win over a text declaration", async () => {
    expect((await detect(text("%PDF-1.4 all ascii"), { fileName: "a.txt", contentType: "text/plain" })).format).toBe("pdf");
  });
});

describe("OOXML packages are told apart by their zip's content", () => {
  test.each([
    ["docx", docx()],
    ["xlsx", xlsx()],
    ["pptx", pptx()],
  ] as const)("%s", async (format, bytes) => {
    // The same neutral name for all: only the zip's content can tell them apart.
    expect((await detect(bytes, { fileName: "office.zip", contentType: "application/zip" })).format).toBe(format);
  });

  test("a plain zip is reported as zip", async () => {
    expect(await detect(zip(), { fileName: "archive.zip", contentType: "application/zip" })).toEqual(unsupported("zip"));
  });

  /** A zip's local header for a stored entry, and the first bytes of its data: an archive cut off there. */
  const cutOff = (name: string, data: Buffer, declaredSize: number) => {
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt32LE(declaredSize, 18);
    header.writeUInt32LE(declaredSize, 22);
    header.writeUInt16LE(Buffer.byteLength(name), 26);
    return Buffer.concat([header, Buffer.from(name), data]);
  };

  test.each([
    ["a word/ entry, in the head", cutOff("word/evil.bin", Buffer.from("MZ not a docx at all"), 1000)],
    ["an xl/ entry, in the head", cutOff("xl/macro.bin", Buffer.alloc(50, 0x78), 100_000)],
    ["word/ entries, past the head", Buffer.concat([cutOff("word/a.bin", Buffer.alloc(70_000, 1), 70_000), cutOff("word/b.bin", Buffer.alloc(10, 1), 5000)])],
  ])("a zip cut off after %s, with no [Content_Types].xml, is a zip (file-type guessed docx or xlsx from the folder)", async (_, bytes) => {
    expect(await detect(bytes, { fileName: "office.docx", contentType: "application/octet-stream" })).toEqual(unsupported("zip"));
  });

  test("an Office package is still one past the head (its central directory is read from the staged file)", async () => {
    const large = zipSync({
      "[Content_Types].xml": strToU8(
        '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
      "word/document.xml": strToU8("<w:document/>"),
      "word/media/big.bin": [randomBytes(200_000), { level: 0 }],
    });
    expect((await detect(large, { fileName: "big.docx" })).format).toBe("docx");
  });
});

describe("unsupported binary formats report file-type's extension", () => {
  test("an AVIF header is avif, not heic", async () => {
    const avif = Buffer.from(heic());
    avif.write("avif", 8, "latin1");
    expect(await detect(avif, { fileName: "photo.heic", contentType: "image/heic" })).toEqual(unsupported("avif"));
  });

  test("non-text bytes starting with a weak magic number", async () => {
    expect(await detect(Buffer.from([0x42, 0x4d, 0, 0, 0xff]))).toEqual(unsupported("bmp"));
  });
});

describe("text formats: declared type or extension, plus clean UTF-8", () => {
  test.each([
    ["text/plain", "txt"],
    ["text/csv", "csv"],
    ["application/json", "json"],
    ["text/html", "html"],
    ["Text/CSV; charset=UTF-8", "csv"],
    [" APPLICATION/JSON ;charset=utf-8", "json"],
  ])("declared type %j is %s", async (contentType, format) => {
    expect((await detect(text("a,b\n1,2\n"), { fileName: "upload", contentType })).format).toBe(format);
  });

  test.each([
    ["notes.txt", "txt"],
    ["data.csv", "csv"],
    ["data.json", "json"],
    ["page.html", "html"],
    ["page.htm", "html"],
  ])("extension of %s is %s", async (fileName, format) => {
    expect((await detect(text("a,b\n1,2\n"), { fileName, contentType: "application/octet-stream" })).format).toBe(format);
  });

  test.each([
    ["REPORT.CSV", "csv"],
    ["Data.Json", "json"],
    ["INDEX.HTM", "html"],
    ["Readme.TxT", "txt"],
  ])("mixed-case extension %s is %s", async (fileName, format) => {
    expect((await detect(text("a,b\n1,2\n"), { fileName })).format).toBe(format);
  });

  test("text/plain is refined by a more specific extension; other declared types win", () => {
    expect(declaredTextFormat("text/plain", "data.csv")).toBe("csv");
    expect(declaredTextFormat("text/plain", "data.bin")).toBe("txt");
    expect(declaredTextFormat("text/csv", "notes.txt")).toBe("csv");
    expect(declaredTextFormat("application/vnd.ms-excel", "data.csv")).toBe("csv"); // what Windows browsers send for .csv
    expect(declaredTextFormat("application/octet-stream", "data")).toBeUndefined();
  });

  test("names and types that match Object.prototype keys are not formats", () => {
    expect(declaredTextFormat("constructor", "x.constructor")).toBeUndefined();
    expect(declaredTextFormat("__proto__", "x.__proto__")).toBeUndefined();
    expect(declaredTextFormat("toString", "x.hasOwnProperty")).toBeUndefined();
  });

  test("JSON is taken on its declaration, not parsed (the edge never holds a whole file)", async () => {
    expect((await detect(text("{ not json"), { fileName: "x.json" })).format).toBe("json");
  });

  test("text whose first bytes are a weak magic number is still text", async () => {
    expect((await detect(text("BMW,Audi\n1,2\n"), { fileName: "cars.csv" })).format).toBe("csv");
    expect((await detect(text("ID3,name\n1,x\n"), { contentType: "text/csv" })).format).toBe("csv");
  });

  test("text that is not UTF-8 and declares no charset is text in the legacy encoding detected (Latin-1 bytes)", async () => {
    const latin1 = Buffer.from("name,city\nZoë,Zürich\n", "latin1");
    expect((await detect(latin1, { fileName: "data.csv", contentType: "text/csv" })).format).toBe("csv");
  });

  test("bytes that are not UTF-8 far into a large file are checked in the detected encoding", async () => {
    const bytes = Buffer.concat([Buffer.alloc(HEAD_BYTES * 3, "a"), Buffer.from([0xc3, 0x28]), Buffer.alloc(100, "b")]);
    expect((await detect(bytes, { fileName: "x.txt" })).format).toBe("txt");
    const binary = Buffer.concat([Buffer.alloc(HEAD_BYTES * 3, "a"), Buffer.from([0xc3, 0x00]), Buffer.alloc(100, "b")]);
    expect((await detect(binary, { fileName: "x.txt" })).format).toBeUndefined();
  });

  test("a file ending inside a multi-byte character is not text", async () => {
    expect((await detect(text("price: 5€").subarray(0, -1), { fileName: "x.txt" })).format).toBeUndefined();
  });

  test("a NUL byte is not text, even in valid UTF-8", async () => {
    expect((await detect(text("a,b\n1,\u0000\n"), { fileName: "data.csv", contentType: "text/csv" })).format).toBeUndefined();
  });

  test("UTF-16 text without a byte order mark or a declared charset is not text (its NUL bytes)", async () => {
    const utf16 = Buffer.from("a,b\n", "utf16le");
    expect((await detect(utf16, { fileName: "data.csv", contentType: "text/csv" })).format).toBeUndefined();
  });

  test("a UTF-8 byte order mark is allowed", async () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("a,b\n")]);
    expect((await detect(withBom, { fileName: "data.csv" })).format).toBe("csv");
  });

  test("a multi-byte character split across chunks is still valid", async () => {
    expect((await detect(text("€😀é".repeat(50)), { fileName: "x.txt", chunkSize: 1 })).format).toBe("txt");
  });
});

describe("header parsing", () => {
  test("mediaType drops parameters, spaces and case", () => {
    expect(mediaType("Text/HTML ; charset=utf-8")).toBe("text/html");
    expect(mediaType("")).toBe("");
  });

  test("extension is the last dotted part, lower-cased", () => {
    expect(extension("a.tar.GZ")).toBe("gz");
    expect(extension("noext")).toBe("");
    expect(extension("dir.d/file")).toBe("");
    expect(extension("trailing.")).toBe("");
  });
});

describe("acceptance", () => {
  test("a detected format the pipe lists is accepted", () => {
    expect(acceptance({ format: "png", detectedFormat: "png" }, ["pdf", "png"])).toEqual({ accepted: true, format: "png" });
  });

  test("a detected format the pipe does not list is refused, naming both", () => {
    expect(acceptance({ format: "gif", detectedFormat: "gif" }, ["pdf", "png"])).toEqual({
      accepted: false,
      detectedFormat: "gif",
      acceptedFormats: ["pdf", "png"],
    });
  });

  test("an unsupported or unknown file is refused", () => {
    expect(acceptance(unsupported("zip"), ["pdf"])).toEqual({ accepted: false, detectedFormat: "zip", acceptedFormats: ["pdf"] });
    expect(acceptance(unsupported(null), [...FORMAT_IDS])).toEqual({ accepted: false, detectedFormat: null, acceptedFormats: FORMAT_IDS });
  });
});

test("any bytes, chunked any way, are detected without throwing", async () => {
  // Prefixes that send file-type down its deeper parsers (zip, TIFF, ISO-BMFF, RIFF, PDF).
  const prefixes = [
    [],
    [0x50, 0x4b, 0x03, 0x04],
    [0x49, 0x49, 0x2a, 0x00],
    [0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70],
    [0x52, 0x49, 0x46, 0x46],
    [0x25, 0x50, 0x44, 0x46],
  ];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...prefixes), fc.uint8Array({ maxLength: 2048 }), fc.integer({ min: 1, max: 512 }), async (prefix, body, chunkSize) => {
      const detection = await detect(Buffer.concat([Buffer.from(prefix), body]), { chunkSize });
      expect(detection.format === undefined || detection.format === detection.detectedFormat).toBe(true);
    }),
    { numRuns: 200 },
  );
});

describe("text in other encodings: a byte order mark, a declared charset, an HTML meta charset", () => {
  const utf16le = (value: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(value, "utf16le")]);
  const utf16be = (value: string) => Buffer.from(utf16le(value)).swap16();
  const utf32 = (value: string, little: boolean) => {
    const codes = [0xfeff, ...[...value].map((char) => char.codePointAt(0)!)];
    const bytes = Buffer.alloc(codes.length * 4);
    codes.forEach((code, index) => (little ? bytes.writeUInt32LE(code, index * 4) : bytes.writeUInt32BE(code, index * 4)));
    return bytes;
  };

  test("UTF-16 LE and BE with a byte order mark are their text format, whatever the chunking", async () => {
    expect((await detect(utf16le("name,city\r\nZoë,Zürich\r\n"), { fileName: "people.csv" })).format).toBe("csv");
    expect((await detect(utf16be("plain 😀 text"), { contentType: "text/plain" })).format).toBe("txt");
    expect((await detect(utf16le("é😀".repeat(40)), { fileName: "x.txt", chunkSize: 1 })).format).toBe("txt");
  });

  test("UTF-32 LE and BE with a byte order mark are their text format", async () => {
    expect((await detect(utf32('{"name":"Zoë 😀"}', true), { fileName: "a.json" })).format).toBe("json");
    expect((await detect(utf32("hello", false), { fileName: "a.txt" })).format).toBe("txt");
  });

  test("a byte order mark does not make broken text text: a lone surrogate, an odd length, a NUL", async () => {
    const lone = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from([0x00, 0xd8, 0x41, 0x00])]);
    expect((await detect(lone, { fileName: "x.txt" })).format).toBeUndefined();
    expect((await detect(utf16le("ab").subarray(0, -1), { fileName: "x.txt" })).format).toBeUndefined();
    expect((await detect(utf16le("a\u0000b"), { fileName: "x.txt" })).format).toBeUndefined();
    const outOfRange = Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00]);
    expect((await detect(outOfRange, { fileName: "x.txt" })).format).toBeUndefined();
  });

  test("a charset declared in the Content-Type decides the encoding", async () => {
    const latin1 = Buffer.from("name,city\nZoë,Zürich\n", "latin1");
    expect((await detect(latin1, { fileName: "p.csv", contentType: "text/csv; charset=windows-1252" })).format).toBe("csv");
    expect((await detect(latin1, { fileName: "p.csv", contentType: 'text/csv; charset="ISO-8859-1"' })).format).toBe("csv");
    expect((await detect(latin1, { fileName: "p.csv", contentType: "text/csv; charset=utf-8" })).format).toBeUndefined();
    expect((await detect(latin1, { fileName: "p.csv", contentType: "text/csv; charset=klingon" })).format).toBeUndefined();
  });

  test("an HTML meta charset in the first 1024 bytes decides the encoding of HTML only", async () => {
    const page = (meta: string) => Buffer.from(`<!doctype html><html><head>${meta}</head><body>Café \x80 5</body></html>`, "latin1");
    expect((await detect(page('<meta charset="windows-1252">'), { fileName: "menu.html" })).format).toBe("html");
    expect(
      (await detect(page('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-15">'), { fileName: "menu.html", chunkSize: 7 })).format,
    ).toBe("html");
    // Without a meta charset in reach, the encoding is detected from the bytes.
    expect((await detect(page(""), { fileName: "menu.html" })).format).toBe("html");
    expect((await detect(page('<meta charset="windows-1252">'), { fileName: "menu.txt" })).format).toBe("txt");
    const late = Buffer.concat([Buffer.from(`<!-- ${"x".repeat(1100)} -->`), page('<meta charset="windows-1252">')]);
    expect((await detect(late, { fileName: "menu.html" })).format).toBe("html");
  });
});
