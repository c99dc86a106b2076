import type { JsonObject } from "@bufbuild/protobuf";

/** Where the worked example sends its results, and whom it takes mail from. */
export interface InvoicesExampleSettings {
  /** Receives invoices with their extracted, validated fields. */
  accountsUrl: string;
  /** Receives every other document. */
  archiveUrl: string;
  /** Senders the email trigger accepts ("@supplier.example" for a whole domain). */
  allowedSenders: string[];
}

/** The JSON Schema an invoice's fields must meet to go on without a person's review. */
const INVOICE_FIELDS_SCHEMA = {
  type: "object",
  required: ["number", "date", "total"],
  properties: {
    number: { type: "string", minLength: 1 },
    date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    total: {
      type: "object",
      required: ["amount", "currency"],
      properties: { amount: { type: "number", exclusiveMinimum: 0 }, currency: { type: "string", pattern: "^[A-Z]{3}$" } },
    },
    paid: { type: "boolean" },
  },
};

/**
 * The worked example pipe "invoices" (docs/pipelines.md): mail in, parse, classify, and for an
 * invoice extract its fields, validate them, stop for a person's review when they are invalid,
 * and call the accounts system back; any other document goes to the archive. One definition, as
 * proto JSON, for the docs, the console's "Create the example" button, the tests and the bench.
 */
export function invoicesExample(settings: InvoicesExampleSettings): JsonObject {
  return {
    nodes: [
      { id: "email", emailTrigger: { allowedSenders: settings.allowedSenders, acceptedFormats: ["pdf", "png", "jpeg", "tiff", "docx"], maxSizeMb: 10 } },
      { id: "parse", parse: {} },
      {
        id: "classify",
        classify: {
          classes: [{ name: "invoice", rules: [{ keywords: ["invoice", "rechnung", "facture"] }, { pattern: "invoice (number|no\\.?)|total", weight: 2 }] }],
          otherwise: "other",
        },
      },
      { id: "route", route: { routes: [{ when: "classify.class = 'invoice'", to: ["extract"] }], otherwise: ["archive"] } },
      {
        id: "extract",
        extract: {
          fields: [
            { name: "number", labels: ["Invoice number", "Invoice No.", "Rechnungsnummer"], required: true },
            { name: "date", labels: ["Invoice date", "Date", "Datum"], type: "FIELD_TYPE_DATE", required: true },
            { name: "total", labels: ["Total", "Amount due", "Gesamt"], type: "FIELD_TYPE_MONEY", required: true },
            { name: "paid", labels: ["Paid"], type: "FIELD_TYPE_BOOLEAN" },
          ],
          dateOrder: "DATE_ORDER_DMY",
          // Missing fields go to the review below, not to a failed run.
          continueOnMissing: true,
        },
      },
      { id: "validate", validate: { select: "extract.fields", schema: JSON.stringify(INVOICE_FIELDS_SCHEMA), continueOnInvalid: true } },
      { id: "review", review: { when: "validate.valid = false", timeoutHours: 72, timeoutDecision: "REVIEW_DECISION_REJECT" } },
      { id: "accounts", callback: { url: settings.accountsUrl }, endBranch: true },
      { id: "archive", callback: { url: settings.archiveUrl } },
    ],
  };
}

/** The example as the console creates it: placeholders to replace with real addresses. */
export const INVOICES_EXAMPLE_DEFAULTS: InvoicesExampleSettings = {
  accountsUrl: "https://accounts.example.com/hooks/docpipe",
  archiveUrl: "https://archive.example.com/hooks/docpipe",
  allowedSenders: ["@supplier.example"],
};
