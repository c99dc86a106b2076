import { fromJson } from "@bufbuild/protobuf";
import { ExtractNodeSchema } from "../../../gen/docpipe/v1/pipe_pb.js";
import { runExtract } from "../../../src/runs/nodes/extract/extract.ts";
import type { NodeContext } from "../../../src/runs/nodes/run-data.ts";
import { parseDocument } from "../../../src/documents/parse/parse-document.ts";
import { INVOICE_EXTRACT } from "../../../src/runs/pipes/invoices-example.ts";
import type { GeneratedInvoice } from "./index.ts";

/** The fields scored: the truth's, and the total's currency on its own. */
export const SCORED_FIELDS = ["number", "date", "due", "po", "supplier", "customer", "total", "vat", "currency", "iban"] as const;
type ScoredField = (typeof SCORED_FIELDS)[number];

/** One field of one invoice as read, against its truth. */
export interface FieldResult {
  invoice: string;
  format: string;
  field: ScoredField;
  right: boolean;
  read: unknown;
  want: unknown;
}

const context: NodeContext = {
  document: { name: "invoice", format: "pdf", contentType: "application/pdf", size: 1 },
  testMode: false,
  signal: new AbortController().signal,
  organizationId: "org-test",
};

/**
 * Reads each invoice as the worked example does (a parse with ruling lines, then the example's
 * extract node), in process, and scores every field: a value is right when it equals the truth, a
 * field the invoice lacks (a VAT-exempt invoice's VAT) is right when nothing is read.
 */
export async function scoreInvoices(invoices: readonly GeneratedInvoice[]): Promise<FieldResult[]> {
  const node = fromJson(ExtractNodeSchema, INVOICE_EXTRACT);
  const results: FieldResult[] = [];
  for (const invoice of invoices) {
    const parse = await parseDocument(invoice.format, invoice.bytes, { ocr: "never", rulingLines: true });
    const { fields } = await runExtract(node, { parse }, context);
    const truth: Record<string, unknown> = { ...invoice.truth, currency: invoice.truth.total.currency };
    const read: Record<string, unknown> = { ...fields, currency: (fields.total as { currency?: string } | undefined)?.currency };
    for (const field of SCORED_FIELDS) {
      const right = JSON.stringify(read[field]) === JSON.stringify(truth[field]);
      results.push({ invoice: invoice.name, format: invoice.format, field, right, read: read[field], want: truth[field] });
    }
  }
  return results;
}
