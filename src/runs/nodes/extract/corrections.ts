import { type ExtractNode, FieldType, FieldTypeSchema } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { parseNumber } from "../normalize.ts";
import { ReviewDataError } from "../review/data-error.ts";
import { typedFieldValue } from "./extract.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An extract output as a reviewer corrected it, each field's text typed as the field is ("3" for a
 * number field is 3, "3 Nov 2026" for a date "2026-11-03"): a reviewer types text, and a later
 * expression, route or JSON Schema reads the field's type. Text that is no value of the type is
 * refused, naming the field; values that are not text (the reviewer sent JSON) stay as sent.
 */
export function typedExtractCorrection(extract: ExtractNode, output: unknown, nodeId: string): unknown {
  if (!isObject(output) || !isObject(output.fields)) return output;
  const fields = { ...output.fields };
  for (const field of extract.fields) {
    if (!Object.hasOwn(fields, field.name)) continue;
    const at = `data.${nodeId}.fields.${field.name}`;
    const sent = fields[field.name];
    // The console's amount box of a found money value sends what Number() cannot read as text ("12,50").
    if (field.type === FieldType.MONEY && isObject(sent) && typeof sent.amount === "string") {
      const amount = sent.amount;
      fields[field.name] = { ...sent, amount: typedText(at, amount, "number", () => parseNumber(amount)) };
      continue;
    }
    if (typeof sent !== "string") continue;
    fields[field.name] = typedText(at, sent, fieldTypeName(field.type), () => typedFieldValue(extract, field, sent));
  }
  for (const table of extract.tables) {
    if (typeof fields[table.name] === "string" && Object.hasOwn(fields, table.name)) {
      throw new ReviewDataError(
        `data.${nodeId}.fields.${table.name}`,
        "a table is a list of rows, each an object keyed by the header: edit the data as JSON to give one",
      );
    }
  }
  return { ...output, fields };
}

/**
 * Text a reviewer sent for a typed value, typed by `parse`; a blank box clears the value (null), and
 * text that is no value of the type is refused naming `at`.
 */
function typedText(at: string, text: string, typeName: string, parse: () => unknown): unknown {
  if (typeName === "string") return parse();
  if (text.trim() === "") return null;
  const value = parse();
  if (value === undefined) throw new ReviewDataError(at, `"${text.slice(0, 100)}" is not a value of the field's type (${typeName})`);
  return value;
}

function fieldTypeName(type: FieldType): string {
  if (type === FieldType.UNSPECIFIED) return "string";
  return (FieldTypeSchema.values.find((known) => known.number === type)?.name ?? "FIELD_TYPE_STRING").replace("FIELD_TYPE_", "").toLowerCase();
}
