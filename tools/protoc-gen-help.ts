/**
 * A buf plugin that writes each proto file's comments as data: `<file>_help.js` exports `help`, the
 * leading comment of every message, field, enum and enum value by its full name
 * ("docpipe.v1.Route.when"). protoc-gen-es keeps comments only in its JSDoc, not in the descriptors
 * it embeds, and the console shows them as the help of the forms it builds from those descriptors.
 */
import { createEcmaScriptPlugin, type GeneratedFile, getComments, runNodeJs, type Schema } from "@bufbuild/protoplugin";

// The descriptor types of the protobuf runtime the plugin framework brings (it may be another copy).
type DescFile = Schema["files"][number];
type DescMessage = DescFile["messages"][number];
type DescEnum = DescFile["enums"][number];

/** A comment as one paragraph: its lines joined, the leading space protoc keeps removed. */
function text(comment: string | undefined): string | undefined {
  if (comment === undefined) return undefined;
  const joined = comment
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ");
  return joined === "" ? undefined : joined;
}

function enumHelp(desc: DescEnum, into: Map<string, string>): void {
  const own = text(getComments(desc).leading);
  if (own !== undefined) into.set(desc.typeName, own);
  for (const value of desc.values) {
    const comment = text(getComments(value).leading);
    if (comment !== undefined) into.set(`${desc.typeName}.${value.name}`, comment);
  }
}

function messageHelp(desc: DescMessage, into: Map<string, string>): void {
  const own = text(getComments(desc).leading);
  if (own !== undefined) into.set(desc.typeName, own);
  for (const field of desc.fields) {
    const comment = text(getComments(field).leading);
    if (comment !== undefined) into.set(`${desc.typeName}.${field.name}`, comment);
  }
  for (const oneof of desc.oneofs) {
    const comment = text(getComments(oneof).leading);
    if (comment !== undefined) into.set(`${desc.typeName}.${oneof.name}`, comment);
  }
  for (const nested of desc.nestedMessages) messageHelp(nested, into);
  for (const nested of desc.nestedEnums) enumHelp(nested, into);
}

function helpOf(file: DescFile): Map<string, string> {
  const help = new Map<string, string>();
  for (const message of file.messages) messageHelp(message, help);
  for (const desc of file.enums) enumHelp(desc, help);
  return help;
}

function generate(schema: Schema, write: (f: GeneratedFile, help: Map<string, string>) => void, extension: string): void {
  for (const file of schema.files) {
    const f = schema.generateFile(`${file.name}_help${extension}`);
    f.preamble(file);
    write(f, helpOf(file));
  }
}

const plugin = createEcmaScriptPlugin({
  name: "protoc-gen-help",
  version: "v1",
  generateTs: (schema) =>
    generate(schema, (f, help) => f.print("export const help: Record<string, string> = ", JSON.stringify(Object.fromEntries(help), null, 2), ";"), ".ts"),
  generateJs: (schema) =>
    generate(
      schema,
      (f, help) => {
        f.print("/** The leading comment of each element of the file, by its full name. */");
        f.print("export const help = ", JSON.stringify(Object.fromEntries(help), null, 2), ";");
      },
      ".js",
    ),
  generateDts: (schema) =>
    generate(
      schema,
      (f) => {
        f.print("/** The leading comment of each element of the file, by its full name. */");
        f.print("export declare const help: Record<string, string>;");
      },
      ".d.ts",
    ),
});

runNodeJs(plugin);
