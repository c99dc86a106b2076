import { docx, pdfOf } from "../parse/samples.ts";

/** A one-page PDF with a text layer: one line of Helvetica per entry, top to bottom . */
export function textLayerPdf(lines: readonly string[]): Buffer {
  const pdfString = (line: string) => line.replace(/[\\()]/g, "\\$&");
  const content = `BT /F1 10 Tf ${lines.map((line, index) => `1 0 0 1 50 ${760 - index * 16} Tm (${pdfString(line)}) Tj`).join(" ")} ET`;
  return pdfOf(
    [
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ],
    "/Root 1 0 R",
  );
}

/** Layout 1, a PDF with a text layer: labels and values on one line, European numbers, a table set in columns. */
export const PDF_INVOICE = [
  "ACME Supplies GmbH, Hauptstrasse 1, Berlin",
  "INVOICE",
  "Invoice number: INV-2026-0042",
  "Invoice date: 3 Nov 2026",
  "Due date: 03/12/2026",
  "Paid: no",
  "Total: EUR 1.334,56",
];

/** Layout 2, a scanned letter (no text layer, read by OCR): US dates and numbers, amounts after a dollar sign. */
export const SCANNED_INVOICE = ["Globex Corporation", "Invoice No. 7781", "Date: 11/03/2026", "Amount due: $1,334.56", "Quantity: 3", "Paid: yes"];

/** Layout 3, a Word document: a label above its value, a tab-set table, amounts with a trailing euro sign. */
export const DOCX_INVOICE = [
  "Initech AG",
  "Rechnung",
  "Invoice number",
  "R-55/2026",
  "Datum:\t2026-11-03",
  "Description\tQty\tAmount",
  "Consulting\t1,5\t1.200,00 €",
  "Travel\t1\t134,56 €",
  "Total\t1.334,56 €",
  "Paid\tja",
];

export function docxInvoice(): Buffer {
  return docx(DOCX_INVOICE.map((line) => line.replaceAll("\t", "</w:t></w:r><w:r><w:tab/><w:t>")));
}
