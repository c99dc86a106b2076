import { parseDocument } from "../src/parse/parse-document.ts";
import { invoiceSet } from "./support/invoices/index.ts";
const set = await invoiceSet();
for (const name of process.argv.slice(2)) {
  const inv = set.find((i) => i.name === name)!;
  const out = await parseDocument(inv.format, inv.bytes, { ocr: "never", rulingLines: true });
  console.log(out.text);
  for (const e of out.elements!) console.log(e.type, JSON.stringify(e.text), e.bbox, e.table ? JSON.stringify(e.table.rows) : "");
}
