/**
 * Tiny sample files of every format, built in code so tests of the detector and of the edge share
 * them. Images are real 1x1 images; the PDF and the OOXML packages are minimal but well formed.
 */
import { deflateSync, crc32 } from "node:zlib";
import { strToU8, zipSync, type Zippable } from "fflate";
import type { FormatId } from "../../src/documents/formats/format-ids.ts";

export interface SampleFile {
  bytes: Uint8Array;
  fileName: string;
  contentType: string;
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A one-page PDF 1.4 with a correct cross-reference table and the customary binary comment line. */
export function pdf(): Uint8Array {
  const objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>"];
  const header = Buffer.concat([Buffer.from("%PDF-1.4\n%"), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]), Buffer.from("\n")]);
  const parts: Buffer[] = [header];
  const offsets: number[] = [];
  let length = header.length;
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.from(`${index + 1} 0 obj\n${body}\nendobj\n`);
    parts.push(object);
    length += object.length;
  });
  const entries = offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  const trailer =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}` + `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(trailer));
  return Buffer.concat(parts);
}

/** A 1x1 baseline JPEG (JFIF), the well-known 134-byte smallest one. */
export function jpeg(): Uint8Array {
  return Buffer.from(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
    "base64",
  );
}

/** A 1x1 grey PNG, chunks and CRCs computed here. */
export function png(): Uint8Array {
  const chunk = (type: string, data: Uint8Array): Buffer => {
    const typeAndData = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typeAndData));
    return Buffer.concat([length, typeAndData, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0); // width
  header.writeUInt32BE(1, 4); // height
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, deflate, adaptive filtering, no interlace
  const pixels = deflateSync(Buffer.from([0, 0x80])); // filter byte "none", one grey pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** A 1x1 transparent GIF89a (43 bytes). */
function gif(): Uint8Array {
  return Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
}

/** A 1x1 lossless WebP (34 bytes). */
function webp(): Uint8Array {
  return Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
}

/**
 * A little-endian baseline TIFF, 1 pixel wide and `height` tall, 8-bit grey, one strip. Its image
 * directory follows the pixels, as many writers do, so a tall one puts it far from the start.
 */
export function tiff(height = 1): Uint8Array {
  const pixelsAt = 8;
  const directoryAt = pixelsAt + height + (height % 2); // directories start on a word boundary
  const tags: [tag: number, type: number, value: number][] = [
    [256, 3, 1], // ImageWidth, SHORT
    [257, 4, height], // ImageLength, LONG
    [258, 3, 8], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 1], // PhotometricInterpretation: black is zero
    [273, 4, pixelsAt], // StripOffsets
    [278, 4, height], // RowsPerStrip
    [279, 4, height], // StripByteCounts
  ];
  const bytes = Buffer.alloc(directoryAt + 2 + tags.length * 12 + 4);
  bytes.write("II", 0, "latin1");
  bytes.writeUInt16LE(42, 2);
  bytes.writeUInt32LE(directoryAt, 4);
  bytes.fill(0x80, pixelsAt, pixelsAt + height);
  bytes.writeUInt16LE(tags.length, directoryAt);
  tags.forEach(([tag, type, value], index) => {
    const at = directoryAt + 2 + index * 12;
    bytes.writeUInt16LE(tag, at);
    bytes.writeUInt16LE(type, at + 2);
    bytes.writeUInt32LE(1, at + 4); // count
    if (type === 3) bytes.writeUInt16LE(value, at + 8);
    else bytes.writeUInt32LE(value, at + 8);
  }); // the next-directory offset stays 0: this is the last one
  return bytes;
}

/** The ftyp box that opens a HEIC image (major brand heic, compatible mif1 and heic); detection needs no more. */
export function heic(): Uint8Array {
  const box = Buffer.alloc(24);
  box.writeUInt32BE(24, 0);
  box.write("ftypheic", 4, "latin1");
  box.writeUInt32BE(0, 12); // minor version
  box.write("mif1heic", 16, "latin1");
  return box;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";

/**
 * An OOXML package: [Content_Types].xml naming the main part's type, the root relationship, the
 * main part; `leadingParts` come first in the archive (e.g. a large image, to push the rest far in).
 */
function ooxml(mainPart: string, mainContentType: string, mainXml: string, leadingParts: Zippable = {}): Uint8Array {
  const files: Zippable = {
    ...leadingParts,
    "[Content_Types].xml": strToU8(
      `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`
        + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        + '<Default Extension="xml" ContentType="application/xml"/>'
        + `<Override PartName="/${mainPart}" ContentType="${mainContentType}"/></Types>`,
    ),
    "_rels/.rels": strToU8(
      `${XML_DECLARATION}<Relationships xmlns="${RELATIONSHIPS}">` + `<Relationship Id="rId1" Type="${OFFICE_DOCUMENT}" Target="${mainPart}"/></Relationships>`,
    ),
    [mainPart]: strToU8(XML_DECLARATION + mainXml),
  };
  return zipSync(files);
}

/** A Word document with one paragraph, "Hello". */
export function docx(leadingParts?: Zippable): Uint8Array {
  return ooxml(
    "word/document.xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
      + "<w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>",
    leadingParts,
  );
}

/** A workbook package (its main part only: enough to identify it, not to open it in Excel). */
export function xlsx(): Uint8Array {
  return ooxml(
    "xl/workbook.xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets/></workbook>',
  );
}

/** A presentation package (its main part only: enough to identify it, not to open it in PowerPoint). */
export function pptx(): Uint8Array {
  return ooxml(
    "ppt/presentation.xml",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    '<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>',
  );
}

/** A plain zip archive holding one text file. */
export function zip(): Uint8Array {
  return zipSync({ "hello.txt": strToU8("hello\n") });
}

/** A message with a text body and a CSV attachment, as a mail program saves it (.eml). */
export function eml(): Uint8Array {
  return utf8(
    [
      "From: Ana <ana@supplier.example>",
      "To: ap@acme.example",
      "Subject: Invoice INV-7",
      "Date: Tue, 03 Nov 2026 09:30:00 +0000",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Hello, the invoice is attached.",
      "",
      "--b1",
      'Content-Type: text/csv; name="lines.csv"',
      'Content-Disposition: attachment; filename="lines.csv"',
      "Content-Transfer-Encoding: base64",
      "",
      Buffer.from("item,amount\nBolts,40\n").toString("base64"),
      "--b1--",
      "",
    ].join("\r\n"),
  );
}

/** An OpenDocument text of `body` (office:text content), its mimetype first and stored, as LibreOffice writes it. */
export function odt(body = '<text:h text:outline-level="1">Héllo</text:h><text:p>One paragraph.</text:p>'): Uint8Array {
  return openDocument("text", body);
}

/** An OpenDocument spreadsheet of `body` (office:spreadsheet content: its `table:table`s are the sheets). */
export function ods(
  body = '<table:table table:name="Héllo"><table:table-row><table:table-cell><text:p>item</text:p></table:table-cell><table:table-cell><text:p>amount</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>Bolts</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="40"><text:p>40</text:p></table:table-cell></table:table-row></table:table>',
): Uint8Array {
  return openDocument("spreadsheet", body);
}

function openDocument(kind: "text" | "spreadsheet", body: string): Uint8Array {
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.3"><office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`;
  return zipSync({
    mimetype: [strToU8(`application/vnd.oasis.opendocument.${kind}`), { level: 0 }],
    "content.xml": strToU8(content),
    "META-INF/manifest.xml": strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
    ),
  });
}

/** An EPUB of `chapters` (XHTML bodies) in spine order, its mimetype first and stored. */
export function epub(chapters: readonly string[] = ["<h1>Chapter one</h1><p>It begins.</p>"]): Uint8Array {
  const files: Record<string, Uint8Array | [Uint8Array, { level: 0 }]> = {
    mimetype: [strToU8("application/epub+zip"), { level: 0 }],
    "META-INF/container.xml": strToU8(
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ),
    "OEBPS/book.opf": strToU8(
      `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>${chapters.map((_, index) => `<item id="c${index}" href="text/c${index}.xhtml" media-type="application/xhtml+xml"/>`).join("")}</manifest><spine>${chapters.map((_, index) => `<itemref idref="c${chapters.length - 1 - index}"/>`).join("")}</spine></package>`,
    ),
  };
  // Stored in reverse, read back in the spine's order (which lists them reversed again).
  chapters.forEach((body, index) => {
    files[`OEBPS/text/c${chapters.length - 1 - index}.xhtml`] = strToU8(
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>${body}</body></html>`,
    );
  });
  return zipSync(files);
}

/** One sample of each format, named and typed as a client would send it. */
export const SAMPLES: Readonly<Record<FormatId, SampleFile>> = {
  pdf: { bytes: pdf(), fileName: "sample.pdf", contentType: "application/pdf" },
  jpeg: { bytes: jpeg(), fileName: "sample.jpg", contentType: "image/jpeg" },
  png: { bytes: png(), fileName: "sample.png", contentType: "image/png" },
  tiff: { bytes: tiff(), fileName: "sample.tiff", contentType: "image/tiff" },
  heic: { bytes: heic(), fileName: "sample.heic", contentType: "image/heic" },
  webp: { bytes: webp(), fileName: "sample.webp", contentType: "image/webp" },
  gif: { bytes: gif(), fileName: "sample.gif", contentType: "image/gif" },
  docx: { bytes: docx(), fileName: "sample.docx", contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
  xlsx: { bytes: xlsx(), fileName: "sample.xlsx", contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
  pptx: { bytes: pptx(), fileName: "sample.pptx", contentType: "application/vnd.openxmlformats-officedocument.presentationml.presentation" },
  txt: { bytes: utf8("Hello, wörld ✓\n"), fileName: "sample.txt", contentType: "text/plain; charset=utf-8" },
  csv: { bytes: utf8("name,city\nZoë,Zürich\n"), fileName: "sample.csv", contentType: "text/csv" },
  json: { bytes: utf8('{"greeting":"こんにちは"}\n'), fileName: "sample.json", contentType: "application/json" },
  html: { bytes: utf8("<!doctype html><title>Hi</title><p>Héllo</p>\n"), fileName: "sample.html", contentType: "text/html" },
  md: { bytes: utf8("# Héllo\n\n- one\n"), fileName: "sample.md", contentType: "text/markdown" },
  eml: { bytes: eml(), fileName: "sample.eml", contentType: "message/rfc822" },
  odt: { bytes: odt(), fileName: "sample.odt", contentType: "application/vnd.oasis.opendocument.text" },
  ods: { bytes: ods(), fileName: "sample.ods", contentType: "application/vnd.oasis.opendocument.spreadsheet" },
  epub: { bytes: epub(), fileName: "sample.epub", contentType: "application/epub+zip" },
  rtf: { bytes: utf8("{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Arial;}}\\f0 H\\'e9llo\\par}"), fileName: "sample.rtf", contentType: "application/rtf" },
};
