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

/**
 * The example's extract node, as a user writes it from docs/nodes.md: each field's labels as
 * invoices in English, German, French, Spanish, Italian and Dutch print them. A label matches a
 * text's whole label part, so "Total" does not take "Total HT" nor a line items table's "Total"
 * column, and "Date" does not take "Due date". The test set in test/support/invoices/ is read with it.
 */
export const INVOICE_EXTRACT: JsonObject = {
  fields: [
    {
      name: "number",
      labels: [
        "Invoice No.",
        "Invoice number",
        "Invoice #",
        "Credit note No.",
        "Rechnungsnummer",
        "Rechnungs-Nr.",
        "Gutschrift-Nr.",
        "Facture n°",
        "N° de facture",
        "Avoir n°",
        "Número de factura",
        "Factura n.º",
        "Factura rectificativa n.º",
        "Numero fattura",
        "Fattura n.",
        "Nota di credito n.",
        "Factuurnummer",
        "Creditnotanummer",
      ],
      required: true,
    },
    {
      name: "date",
      labels: ["Invoice date", "Date", "Rechnungsdatum", "Datum", "Date de facture", "Fecha de factura", "Fecha", "Data fattura", "Data", "Factuurdatum"],
      type: "FIELD_TYPE_DATE",
      required: true,
    },
    {
      name: "due",
      labels: [
        "Due date",
        "Payment due",
        "Zahlbar bis",
        "Fälligkeitsdatum",
        "Date d'échéance",
        "Échéance",
        "Fecha de vencimiento",
        "Vencimiento",
        "Data di scadenza",
        "Scadenza",
        "Vervaldatum",
      ],
      type: "FIELD_TYPE_DATE",
    },
    {
      name: "po",
      labels: [
        "PO number",
        "PO No.",
        "P.O. Number",
        "Purchase order",
        "Ihre Bestellung",
        "Bestellnummer",
        "Bon de commande",
        "N° de commande",
        "Número de pedido",
        "Numero ordine",
        "Inkoopordernummer",
      ],
    },
    {
      name: "supplier",
      labels: [
        "Supplier",
        "From",
        "Seller",
        "Company",
        "Lieferant",
        "Firma",
        "Fournisseur",
        "Société",
        "Proveedor",
        "Empresa",
        "Fornitore",
        "Ditta",
        "Leverancier",
        "Bedrijf",
      ],
    },
    { name: "customer", labels: ["Bill to", "Sold to", "Customer", "Rechnungsempfänger", "Kunde", "Client", "Facturé à", "Cliente", "Facturar a", "Klant"] },
    {
      name: "total",
      labels: [
        "Total",
        "Total due",
        "Amount due",
        "Gesamtbetrag",
        "Rechnungsbetrag",
        "Total TTC",
        "Net à payer",
        "Importe total",
        "Totale fattura",
        "Totale",
        "Totaal",
        "Te betalen",
      ],
      type: "FIELD_TYPE_MONEY",
      required: true,
    },
    { name: "vat", labels: ["VAT", "Sales tax", "Tax", "MwSt.", "USt.", "Umsatzsteuer", "TVA", "IVA", "BTW"], type: "FIELD_TYPE_MONEY" },
    { name: "iban", labels: ["IBAN"] },
    { name: "paid", labels: ["Paid", "Bezahlt", "Payé", "Pagado", "Pagato", "Betaald"], type: "FIELD_TYPE_BOOLEAN" },
  ],
  dateOrder: "DATE_ORDER_DMY",
  // Missing fields go to the review below, not to a failed run.
  continueOnMissing: true,
};

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
          classes: [
            {
              name: "invoice",
              rules: [
                { keywords: ["invoice", "rechnung", "facture", "factura", "fattura", "factuur"] },
                { pattern: "invoice (number|no\\.?)|total", weight: 2 },
              ],
            },
          ],
          otherwise: "other",
        },
      },
      { id: "route", route: { routes: [{ when: "classify.class = 'invoice'", to: ["extract"] }], otherwise: ["archive"] } },
      { id: "extract", extract: INVOICE_EXTRACT },
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
