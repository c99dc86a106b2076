import { readFile } from "node:fs/promises";
import { crc32, deflateSync } from "node:zlib";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { forOcr, MAX_OCR_SIDE } from "../../src/documents/parse/ocr-images.ts";
import { closeOcr } from "../../src/documents/parse/ocr.ts";
import { boundPages } from "../../src/documents/parse/ocr-pages.ts";
import { MAX_TEXT_BYTES } from "../../src/documents/parse/text.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { ParseError } from "../../src/documents/parse/parse-error.ts";
import { characterErrorRate, lowResolutionJpeg, pdfOf, textJpeg, textPng, textTiff } from "./ocr-samples.ts";

// One engine (eng) serves every test here: it starts once, on the first OCR.
afterAll(closeOcr);

const LETTER = ["Invoice 2041 from Northwind Traders", "Total due: 1,337.50 EUR by 30 June 2026", "Questions? Write to billing@example.com"];

describe("OCR of pictures", () => {
  it("reads 12 pt text in a 300 dpi PNG with a character error rate of at most 2%", async () => {
    const output = await parseDocument("png", textPng(LETTER));
    expect(characterErrorRate(LETTER.join("\n"), output.text!)).toBeLessThanOrEqual(0.02);
    expect(output).toMatchObject({ format: "png", width: 1800, truncated: false, ocrPages: [1] });
    expect(output.pages).toEqual([{ page: 1, ocr: true, text: output.text, confidence: expect.any(Number) }]);
    expect(output.pages![0]!.confidence).toBeGreaterThan(80);
  });

  it("reads a JPEG the same way", async () => {
    const output = await parseDocument("jpeg", await textJpeg(LETTER));
    expect(characterErrorRate(LETTER.join("\n"), output.text!)).toBeLessThanOrEqual(0.02);
  });

  it("reads every page of a TIFF, in order", async () => {
    const output = await parseDocument("tiff", await textTiff([["First page of the fax"], ["Second page of the fax"]]));
    expect(output).toMatchObject({ format: "tiff", pageCount: 2, ocrPages: [1, 2] });
    expect(output.pages!.map((page) => page.text)).toEqual(["First page of the fax", "Second page of the fax"]);
    expect(output.text).toBe("First page of the fax\n\nSecond page of the fax");
  });

  it("reads WebP and GIF pictures", async () => {
    for (const [format, bytes] of [
      [
        "webp",
        await sharp(textPng(["Hello WebP world"]))
          .webp({ lossless: true })
          .toBuffer(),
      ],
      [
        "gif",
        await sharp(textPng(["Hello GIF world"]))
          .gif()
          .toBuffer(),
      ],
    ] as const) {
      expect((await parseDocument(format, bytes)).text, format).toBe(`Hello ${format === "webp" ? "WebP" : "GIF"} world`);
    }
  });

  it("reads a HEIF picture whose image is AV1-coded (sharp decodes it)", async () => {
    const heif = await sharp(textPng(["Hello HEIF world"]))
      .heif({ compression: "av1", quality: 90 })
      .toBuffer();
    expect((await parseDocument("heic", heif)).text).toBe("Hello HEIF world");
  });

  // HEVC-coded HEIC, as phones write it. Made once with libheif's heif-enc (Debian: libheif-examples) from
  // textPng(["Hello HEIC world"]): `heif-enc -q 60 -o hello-heic.heic in.png`; no HEVC encoder is needed to test.
  it("reads an HEVC-coded HEIC picture (heic-decode)", async () => {
    const heic = await readFile(new URL("./documents/hello-heic.heic", import.meta.url));
    expect((await parseDocument("heic", heic)).text).toBe("Hello HEIC world");
  });

  it("scales a large picture down to MAX_OCR_SIDE, and its resolution with it", async () => {
    const large = sharp({ create: { width: MAX_OCR_SIDE * 2, height: 1000, channels: 3, background: "#ffffff" } })
      .png()
      .withMetadata({ density: 600 });
    const { png, dpi } = await forOcr(sharp(await large.toBuffer()));
    expect(await sharp(png).metadata()).toMatchObject({ width: MAX_OCR_SIDE, height: 500, channels: 1 });
    expect(dpi).toBe(300);
  });

  it("enlarges a small picture before OCR: a page captured at screen resolution (8 px letters) gives over 90% of its words (53% without)", async () => {
    const paper = [
      "Attention is all you need: the dominant sequence transduction models are based",
      "on complex recurrent or convolutional neural networks that include an encoder",
      "and a decoder. The best performing models also connect the encoder and decoder",
      "through an attention mechanism. We propose a new simple network architecture.",
      "Experiments on two machine translation tasks show these models to be superior",
      "in quality while being more parallelizable and requiring significantly less time.",
    ];
    const picture = await lowResolutionJpeg(paper);
    const { png, scale } = await forOcr(sharp(picture));
    expect(await sharp(png).metadata()).toMatchObject({ width: 2000 });
    expect(scale).toBeCloseTo(2000 / 791, 5);
    const output = await parseDocument("jpeg", picture);
    const words = paper.join(" ").split(/\s+/);
    const read = new Set(output.text!.split(/\s+/));
    expect(words.filter((word) => read.has(word)).length / words.length).toBeGreaterThan(0.9);
  });

  it("gives the engine's paragraphs as elements, with the page and their box in the picture's own pixels", async () => {
    const picture = textPng(LETTER);
    const { width, height } = await sharp(picture).metadata();
    const output = await parseDocument("png", picture);
    expect(output.elements!.length).toBeGreaterThan(0);
    for (const element of output.elements!) {
      expect(element.page).toBe(1);
      const [x0, y0, x1, y1] = element.bbox!;
      expect(0 <= x0 && x0 < x1 && x1 <= width! && 0 <= y0 && y0 < y1 && y1 <= height!).toBe(true);
    }
    // The text starts 60 px from the left edge (textPng), whatever scale the engine read it at.
    expect(Math.abs(output.elements![0]!.bbox![0] - 60)).toBeLessThan(10);
    expect(
      output
        .elements!.map((element) => element.text)
        .join(" ")
        .split(/\s+/),
    ).toEqual(output.text!.split(/\s+/));
    expect(output.markdown).toContain("Invoice 2041");
  });

  it("with ocr never, a picture gives its dimensions only", async () => {
    expect(await parseDocument("png", textPng(["Not read"]), { ocr: "never" })).toEqual({ format: "png", width: 1800, height: 150 });
  });
});

describe("OCR of PDFs", () => {
  it("a two-page image-only PDF reports two OCRed pages", async () => {
    const output = await parseDocument("pdf", await pdfOf([{ scan: ["Scanned page one"] }, { scan: ["Scanned page two"] }]));
    expect(output).toMatchObject({ format: "pdf", pageCount: 2, ocrPages: [1, 2] });
    expect(output.text).toBe("Scanned page one\n\nScanned page two");
    expect(output.pages!.every((page) => page.ocr && page.confidence! > 80)).toBe(true);
  });

  it("an OCRed page's elements carry its page number and boxes in PDF points, within the page", async () => {
    const output = await parseDocument("pdf", await pdfOf([{ scan: ["Scanned page one"] }, { scan: ["Scanned page two"] }]));
    expect(output.elements!.map((element) => [element.page, element.text])).toEqual([
      [1, "Scanned page one"],
      [2, "Scanned page two"],
    ]);
    for (const element of output.elements!) {
      const { width, height } = output.pages![element.page! - 1]!;
      const [x0, y0, x1, y1] = element.bbox!;
      expect(0 <= x0 && x0 < x1 && x1 <= width! && 0 <= y0 && y0 < y1 && y1 <= height!).toBe(true);
    }
  });

  it("a mixed PDF OCRs only its image-only page; the text page keeps its text layer", async () => {
    const output = await parseDocument("pdf", await pdfOf([{ text: "This page has a real text layer" }, { scan: ["Only a picture of words"] }]));
    expect(output.ocrPages).toEqual([2]);
    expect(output.pages).toMatchObject([
      { page: 1, ocr: false, text: "This page has a real text layer" },
      { page: 2, ocr: true, text: "Only a picture of words", confidence: expect.any(Number) },
    ]);
  });

  it("in auto, a scan with a few characters of text (a stamped page number) is OCRed; a short text page without pictures is not", async () => {
    const scanned = await parseDocument("pdf", await pdfOf([{ scan: ["Words only in the picture"], stamp: "p. 1" }]));
    expect(scanned.ocrPages).toEqual([1]);
    expect(scanned.text).toContain("Words only in the picture");
    const short = await parseDocument("pdf", await pdfOf([{ text: "Page 2" }]));
    expect(short).toMatchObject({ ocrPages: [], text: "Page 2" });
  });

  it("ocr always reads text pages too; ocr never leaves scanned pages empty", async () => {
    const pdf = await pdfOf([{ text: "This page has a real text layer" }, { scan: ["Only a picture of words"] }]);
    expect((await parseDocument("pdf", pdf, { ocr: "always" })).ocrPages).toEqual([1, 2]);
    const never = await parseDocument("pdf", pdf, { ocr: "never" });
    expect(never.ocrPages).toEqual([]);
    expect(never.pages!.map((page) => page.text)).toEqual(["This page has a real text layer", ""]);
  });

  it("a PDF that needs a password fails with document_encrypted", async () => {
    const attempt = parseDocument("pdf", await pdfOf([{ text: "secret" }], { encrypted: true }));
    await expect(attempt).rejects.toThrow(ParseError);
    await expect(attempt).rejects.toMatchObject({ code: "document_encrypted", message: expect.stringMatching(/^the PDF is encrypted/) });
  });
});

describe("the 1 MB text cap", () => {
  it("page texts share the document's budget: once it is spent, later pages keep their number but no text", () => {
    const half = "a".repeat(MAX_TEXT_BYTES / 2 + 10);
    const pages = boundPages([1, 2, 3].map((page) => ({ page, text: half, ocr: true, confidence: 90 })));
    expect(pages.map((page) => page.text.length)).toEqual([half.length, MAX_TEXT_BYTES - half.length, 0]);
    expect(pages[2]).toEqual({ page: 3, text: "", ocr: true, confidence: 90 });
  });
});

describe("pictures too large to decode", () => {
  it("a small PNG declaring 20000 x 20000 pixels is refused by its header, before decoding", async () => {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(20_000, 0);
    header.writeUInt32BE(20_000, 4);
    header.set([8, 0, 0, 0, 0], 8);
    const chunk = (type: string, data: Buffer) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])));
      return Buffer.concat([length, Buffer.from(type), data, crc]);
    };
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", header),
      chunk("IDAT", deflateSync(Buffer.alloc(20_001 * 10))),
      chunk("IEND", Buffer.alloc(0)),
    ]);
    await expect(parseDocument("png", bomb)).rejects.toThrow(/cannot parse the png document: .*pixel limit/);
  });
});

describe("engines", () => {
  it("a third language combination retires the least recently used engine only after its queued images are read", async () => {
    const image = textPng(["Three engines in turn"]);
    const reads = [["eng"], ["deu"], ["fra"], ["eng"]].map((languages) => parseDocument("png", image, { languages: languages as ["eng"] }));
    expect((await Promise.all(reads)).map((output) => output.text)).toEqual(Array(4).fill("Three engines in turn"));
  });
});
