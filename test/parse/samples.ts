import { crc32, deflateRawSync, deflateSync } from "node:zlib";
import { strToU8, zipSync } from "fflate";

/** A valid one-page PDF showing `text` in Helvetica, with a Title in its info dictionary. */
export function onePagePdf(text: string, title = "Sample"): Buffer {
  const content = `BT /F1 24 Tf 72 700 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Title (${title}) >>`,
  ];
  return pdfOf(objects, "/Root 1 0 R /Info 6 0 R");
}

/** A PDF of `objects` (numbered from 1) with a cross-reference table; `trailer` holds the trailer's entries beside /Size. */
export function pdfOf(objects: string[], trailer: string): Buffer {
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  pdf += `trailer\n<< /Size ${objects.length + 1} ${trailer} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A valid grey PNG of the given size. */
export function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let row = 0; row < height; row++) rows[row * (width + 1)] = 0; // filter byte: none
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(rows)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A minimal DOCX (the three parts Word needs) with one paragraph per entry. */
export function docx(paragraphs: string[]): Buffer {
  return docxOfBody(paragraphs.map((text) => `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`).join(""));
}

/** A minimal DOCX whose `<w:body>` is the WordprocessingML given, with `<w:style>`s in word/styles.xml when given. */
export function docxOfBody(body: string, styles?: string): Buffer {
  return Buffer.from(
    zipSync({
      "[Content_Types].xml": strToU8(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
          + '<Default Extension="xml" ContentType="application/xml"/>'
          + '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
      "_rels/.rels": strToU8(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
          + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
      "word/document.xml": strToU8(
        '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
          + `<w:body>${body}</w:body></w:document>`,
      ),
      ...(styles === undefined
        ? {}
        : {
            "word/styles.xml": strToU8(
              `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">${styles}</w:styles>`,
            ),
          }),
    }),
  );
}

/** A little-endian TIFF header and one IFD (width and height tags only) per page; enough for size and page count. */
export function tiff(width: number, height: number, pages: number): Buffer {
  const ifdSize = 2 + 2 * 12 + 4;
  const bytes = Buffer.alloc(8 + pages * ifdSize);
  bytes.write("II", 0, "latin1");
  bytes.writeUInt16LE(42, 2);
  bytes.writeUInt32LE(8, 4);
  for (let page = 0; page < pages; page++) {
    const at = 8 + page * ifdSize;
    bytes.writeUInt16LE(2, at);
    for (const [index, [tag, value]] of [
      [256, width],
      [257, height],
    ].entries()) {
      const entry = at + 2 + index * 12;
      bytes.writeUInt16LE(tag!, entry);
      bytes.writeUInt16LE(3, entry + 2); // SHORT
      bytes.writeUInt32LE(1, entry + 4);
      bytes.writeUInt16LE(value!, entry + 8);
    }
    bytes.writeUInt32LE(page === pages - 1 ? 0 : at + ifdSize, at + 2 + 2 * 12);
  }
  return bytes;
}

const SPREADSHEET_ML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const DRAWING_ML = "http://schemas.openxmlformats.org/drawingml/2006/main";
const PRESENTATION_ML = "http://schemas.openxmlformats.org/presentationml/2006/main";
const OFFICE_RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

export interface WorkbookSample {
  sheets: { name: string; inlineStrings?: string[] }[];
  /** Raw `<si>` bodies, e.g. "<t>Total</t>" or "<r><t>Ri</t></r><r><t>ch</t></r>". */
  sharedStrings?: string[];
}

/** An xlsx package with the parts the parser reads: the workbook, the shared strings, one worksheet per sheet. */
export function xlsx({ sheets, sharedStrings }: WorkbookSample): Buffer {
  const sheetList = sheets.map(({ name }, index) => `<sheet name="${name}" sheetId="${index + 1}" r:id="rId${index + 1}"/>`).join("");
  const parts: Record<string, Uint8Array> = {
    "xl/workbook.xml": strToU8(`<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${OFFICE_RELATIONSHIPS}"><sheets>${sheetList}</sheets></workbook>`),
  };
  if (sharedStrings !== undefined) {
    const items = sharedStrings.map((item) => `<si>${item}</si>`).join("");
    parts["xl/sharedStrings.xml"] = strToU8(`<sst xmlns="${SPREADSHEET_ML}" count="${sharedStrings.length}">${items}</sst>`);
  }
  sheets.forEach(({ inlineStrings = [] }, index) => {
    const cells = inlineStrings.map((text, row) => `<row r="${row + 1}"><c r="A${row + 1}" t="inlineStr"><is><t>${text}</t></is></c></row>`);
    parts[`xl/worksheets/sheet${index + 1}.xml`] = strToU8(`<worksheet xmlns="${SPREADSHEET_ML}"><sheetData>${cells.join("")}</sheetData></worksheet>`);
  });
  return Buffer.from(zipSync(parts));
}

/** A pptx package: the presentation part and one slide per entry, each a list of paragraphs of `<a:t>` runs. */
export function pptx(slides: string[][][]): Buffer {
  const parts: Record<string, Uint8Array> = {
    "ppt/presentation.xml": strToU8(`<p:presentation xmlns:p="${PRESENTATION_ML}"/>`),
  };
  slides.forEach((paragraphs, index) => {
    const body = paragraphs.map((runs) => `<a:p>${runs.map((run) => `<a:r><a:rPr lang="en-US"/><a:t>${run}</a:t></a:r>`).join("")}</a:p>`).join("");
    parts[`ppt/slides/slide${index + 1}.xml`] = strToU8(
      `<p:sld xmlns:a="${DRAWING_ML}" xmlns:p="${PRESENTATION_ML}"><p:cSld><p:spTree><p:sp><p:txBody>${body}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
    );
    parts[`ppt/slides/_rels/slide${index + 1}.xml.rels`] = strToU8(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>`);
  });
  return Buffer.from(zipSync(parts));
}

/** `zip` with the uncompressed size its central directory declares for `name` set to `size` (a zip bomb's claim). */
export function declaringSize(zip: Buffer, name: string, size: number): Buffer {
  const patched = Buffer.from(zip);
  for (let at = patched.indexOf("PK\u0001\u0002", 0, "latin1"); at !== -1; at = patched.indexOf("PK\u0001\u0002", at + 4, "latin1")) {
    const nameLength = patched.readUInt16LE(at + 28);
    if (patched.toString("utf8", at + 46, at + 46 + nameLength) === name) {
      patched.writeUInt32LE(size, at + 24);
      return patched;
    }
  }
  throw new Error(`no ${name} in the archive`);
}

/** One entry of a hand-built zip: its data as stored, and what the archive says about it. */
export interface RawZipEntry {
  name: string;
  data: Uint8Array;
  /** 0 stored, 8 deflated. */
  method: number;
  /** The uncompressed size the archive declares. */
  size: number;
  flags?: number;
}

/** `text` as a stored entry. */
export function storedEntry(name: string, text: string): RawZipEntry {
  const data = Buffer.from(text, "utf8");
  return { name, data, method: 0, size: data.length };
}

/** An entry whose data inflates to `inflatedBytes` zeros (60 MB deflate to about 60 KB) but declares `declaredSize`. */
export function zerosEntry(name: string, inflatedBytes: number, declaredSize = inflatedBytes): RawZipEntry {
  return { name, data: deflateRawSync(Buffer.alloc(inflatedBytes)), method: 8, size: declaredSize };
}

/** A zip archive of `entries` exactly as described, lies included (CRCs are left zero: the reader does not check them). */
export function rawZip(entries: RawZipEntry[]): Buffer {
  const locals: Uint8Array[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, method, size, flags = 0 } of entries) {
    const fileName = Buffer.from(name, "utf8");
    const local = littleEndian(30, [
      [0, 4, 0x04034b50],
      [4, 2, 20],
      [6, 2, flags],
      [8, 2, method],
      [18, 4, data.length],
      [22, 4, size],
      [26, 2, fileName.length],
    ]);
    const central = littleEndian(46, [
      [0, 4, 0x02014b50],
      [4, 2, 20],
      [6, 2, 20],
      [8, 2, flags],
      [10, 2, method],
      [20, 4, data.length],
      [24, 4, size],
      [28, 2, fileName.length],
      [42, 4, offset],
    ]);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = littleEndian(22, [
    [0, 4, 0x06054b50],
    [8, 2, entries.length],
    [10, 2, entries.length],
    [12, 4, directory.length],
    [16, 4, offset],
  ]);
  return Buffer.concat([...locals, directory, end]);
}

/** A zeroed record of `length` bytes with the given little-endian fields (offset, width in bytes, value) set. */
function littleEndian(length: number, fields: [at: number, width: 2 | 4, value: number][]): Buffer {
  const record = Buffer.alloc(length);
  for (const [at, width, value] of fields) record.writeUIntLE(value, at, width);
  return record;
}

/** A run of text placed on a PDF page: its baseline's start in points from the bottom-left, its font size, and whether it is set in bold. */
export interface PlacedText {
  x: number;
  y: number;
  size: number;
  text: string;
  bold?: boolean;
  /** Turned counterclockwise by this many degrees about its start (a label up a margin: 90). */
  angle?: number;
}

/**
 * A PDF of US Letter pages (612 x 792 points), each drawing its runs in Helvetica (or
 * Helvetica-Bold) in the order given, after the page's `drawings` (content stream operators: lines,
 * rectangles) when given.
 */
export function placedTextPdf(pages: PlacedText[][], drawings: string[] = []): Buffer {
  const pdfString = (text: string) => text.replace(/[\\()]/g, (char) => `\\${char}`);
  const pageObjects = pages.flatMap((runs, index) => {
    const place = (x: number, y: number, angle: number | undefined) => {
      if (angle === undefined) return `${x} ${y} Td`;
      const [cos, sin] = [Math.cos((angle * Math.PI) / 180), Math.sin((angle * Math.PI) / 180)].map((value) => Math.round(value * 1e6) / 1e6);
      return `${cos} ${sin} ${-sin!} ${cos} ${x} ${y} Tm`;
    };
    const text = runs
      .map(({ x, y, size, text, bold, angle }) => `BT /${bold === true ? "F2" : "F1"} ${size} Tf ${place(x, y, angle)} (${pdfString(text)}) Tj ET`)
      .join("\n");
    const content = drawings[index] === undefined ? text : `${drawings[index]}\n${text}`;
    const contentId = 5 + index * 2 + 1;
    return [
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contentId} 0 R /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    ];
  });
  const kids = pages.map((_, index) => `${5 + index * 2} 0 R`).join(" ");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ...pageObjects,
  ];
  return pdfOf(objects, "/Root 1 0 R");
}
