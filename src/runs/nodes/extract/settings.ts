import type { ExtractNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compilePattern } from "../../sandbox/patterns.ts";
import { checkCurrency, checkPhrase, requireText, settingsInvalid } from "../settings.ts";

/** Each field and table is named once, and a field has a pattern or labels that compile. */
export function checkExtractSettings(extract: ExtractNode, path: string): void {
  const names = new Set<string>();
  const named = (name: string, field: string) => {
    requireText(name, field, "a name");
    // A member of every object: as a key of the output's fields it would set its prototype, not a field.
    if (name === "__proto__") throw settingsInvalid(field, `"__proto__" cannot name a field`);
    if (names.has(name)) throw settingsInvalid(field, `"${name}" is used twice`);
    names.add(name);
  };
  extract.fields.forEach((field, index) => {
    const at = `${path}.fields[${index}]`;
    named(field.name, `${at}.name`);
    if (field.pattern === "" && field.labels.length === 0) throw settingsInvalid(at, "set a pattern or labels");
    if (field.pattern !== "") compilePattern(field.pattern, `${at}.pattern`);
    field.labels.forEach((label, labelIndex) => checkPhrase(label, `${at}.labels[${labelIndex}]`));
    checkCurrency(field.currency, `${at}.currency`);
  });
  extract.tables.forEach((table, index) => {
    named(table.name, `${path}.tables[${index}].name`);
    checkCurrency(table.currency, `${path}.tables[${index}].currency`);
  });
}
