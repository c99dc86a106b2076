import { PDFDocument, StandardFonts } from "pdf-lib";

/** A PDF with one page per string, each string written on its page (a line per "\n"), as a text layer pdf.js reads. */
export async function textPdf(pages: readonly string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([595, 842]);
    text.split("\n").forEach((line, index) => {
      page.drawText(line, { x: 50, y: 780 - index * 20, size: 12, font });
    });
  }
  return Buffer.from(await pdf.save());
}

/** A PDF of `count` blank pages (a long document, cheap to make). */
export async function blankPdf(count: number): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  for (let n = 0; n < count; n++) pdf.addPage([200, 200]);
  return Buffer.from(await pdf.save());
}
