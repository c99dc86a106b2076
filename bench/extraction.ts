import { invoiceSet } from "../test/support/invoices/index.ts";
import { type FieldResult, SCORED_FIELDS, scoreInvoices } from "../test/support/invoices/score.ts";
import { type BenchRow, markdownTable } from "./support/report.ts";

// Extraction accuracy (issue 52): the generated invoice set (test/support/invoices/) read with the
// worked example's extract node, per field and per format; every field right is the target.

function percent(results: readonly FieldResult[]): number {
  return results.length === 0 ? 0 : (100 * results.filter(({ right }) => right).length) / results.length;
}

export async function benchExtraction(): Promise<{ rows: BenchRow[]; sections: string[] }> {
  const invoices = await invoiceSet();
  const results = await scoreInvoices(invoices);
  const formats = [...new Set(invoices.map(({ format }) => format))];
  const target = { op: ">=" as const, value: 100 };
  const rows: BenchRow[] = [
    { name: `extraction: field values right, ${invoices.length} invoices`, value: percent(results), unit: "%", target },
    ...SCORED_FIELDS.map((field) => ({
      name: `extraction: ${field} right`,
      value: percent(results.filter((result) => result.field === field)),
      unit: "%",
      target,
    })),
    ...formats.map((format) => ({
      name: `extraction: ${format} fields right`,
      value: percent(results.filter((result) => result.format === format)),
      unit: "%",
      target,
    })),
  ];
  const entirelyRight = invoices.filter(({ name }) => results.every((result) => result.invoice !== name || result.right)).length;
  rows.push({ name: "extraction: invoices entirely right", value: entirelyRight, unit: `of ${invoices.length}`, target: { op: ">=", value: invoices.length } });
  const matrix = markdownTable(
    ["field", ...formats],
    SCORED_FIELDS.map((field) => [
      field,
      ...formats.map((format) => `${percent(results.filter((result) => result.field === field && result.format === format)).toFixed(1)} %`),
    ]),
  );
  return { rows, sections: [`### Extraction accuracy by field and format\n\n${matrix}`] };
}
