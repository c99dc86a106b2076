import { describe, expect, it } from "vitest";
import { invoiceSet } from "../support/invoices/index.ts";
import { scoreInvoices } from "../support/invoices/score.ts";

describe("the extraction set: generated invoices read with the worked example's extract node", async () => {
  const invoices = await invoiceSet();

  it("has at least 60 invoices in PDF, DOCX, plain text and HTML, in six languages", () => {
    expect(invoices.length).toBeGreaterThanOrEqual(60);
    expect(new Set(invoices.map(({ format }) => format))).toEqual(new Set(["pdf", "docx", "txt", "html"]));
    expect(new Set(invoices.map(({ name }) => name.split("-")[1]))).toEqual(new Set(["en", "de", "fr", "es", "it", "nl"]));
  });

  it("reads every field of every invoice right: number, dates, PO number, supplier, customer, total, VAT, currency, IBAN", async () => {
    const results = await scoreInvoices(invoices);
    const wrong = results
      .filter(({ right }) => !right)
      .map(({ invoice, field, read, want }) => `${invoice} ${field}: ${JSON.stringify(read)}, want ${JSON.stringify(want)}`);
    expect(wrong).toEqual([]);
    expect(results.length).toBe(invoices.length * 10);
  }, 120_000);
});
