import type { ClassifyRule, Node } from "../../gen/docpipe/v1/pipe_pb.js";
import { FORMAT_IDS, isFormatId } from "../formats/format-ids.ts";
import { compileExpression } from "./expressions.ts";
import { compilePattern } from "./patterns.ts";
import { StepError } from "./step-error.ts";
import { checkSchemaText } from "./validate/validate.ts";

function requireText(value: string, field: string, what: string): void {
  if (value.trim() === "") throw new StepError("settings_invalid", `${field}: ${what} is required`, { field });
}

/** The longest keyword or label, in characters and in words. */
const MAX_PHRASE_LENGTH = 100;
const MAX_PHRASE_WORDS = 8;

/**
 * A keyword or label is looked for at every position of a document's text, word by word (any run
 * of space between its words), so its length multiplies the text's: a 200-word keyword over a
 * 120,000-character text held the event loop 155 ms, 2,000 words 7.5 s. Within these limits a
 * megabyte of hostile text takes about 17 ms.
 */
function checkPhrase(phrase: string, field: string): void {
  requireText(phrase, field, "a keyword or label");
  if (phrase.length > MAX_PHRASE_LENGTH || phrase.trim().split(/\s+/).length > MAX_PHRASE_WORDS) {
    throw new StepError("settings_invalid", `${field}: a keyword or label is at most ${MAX_PHRASE_LENGTH} characters and ${MAX_PHRASE_WORDS} words`, {
      field,
    });
  }
}

function checkCurrency(currency: string, field: string): void {
  if (currency !== "" && !/^[A-Za-z]{3}$/.test(currency)) throw new StepError("settings_invalid", `${field}: must be an ISO 4217 code such as EUR`, { field });
}

/** Pages a classify rule's page range may name at most. */
const MAX_RULE_PAGES = 1_000_000;

/**
 * A classify rule holds when every condition it sets holds, so it must set one: a rule of none held
 * for every document and gave its class a score whatever the text. A format never met (a typo such
 * as "PDF"), a page range no document falls in, or a weight that is not a number would likewise
 * decide every document the same way without a word.
 */
function checkClassifyRule(rule: ClassifyRule, at: string): void {
  const fail = (field: string, message: string) => {
    throw new StepError("settings_invalid", `${field}: ${message}`, { field });
  };
  const conditions = [
    rule.keywords.length > 0,
    rule.pattern !== "",
    rule.formats.length > 0,
    // At least 0 pages holds for every document: not a condition.
    (rule.minPages ?? 0) > 0,
    rule.maxPages !== undefined,
    rule.fileNamePattern !== "",
  ];
  if (!conditions.some(Boolean)) fail(at, "set at least one condition: keywords, pattern, formats, min_pages above 0, max_pages or file_name_pattern");
  if (rule.pattern !== "") compilePattern(rule.pattern, `${at}.pattern`);
  rule.keywords.forEach((keyword, keywordIndex) => checkPhrase(keyword, `${at}.keywords[${keywordIndex}]`));
  if (rule.fileNamePattern !== "") compilePattern(rule.fileNamePattern, `${at}.file_name_pattern`);
  rule.formats.forEach((format, index) => {
    if (!isFormatId(format)) fail(`${at}.formats[${index}]`, `unknown format "${format.slice(0, 100)}"; known: ${FORMAT_IDS.join(", ")}`);
  });
  // Every document has a page (a text has one): a maximum of 0 holds for none.
  for (const [field, pages, least] of [
    ["min_pages", rule.minPages, 0],
    ["max_pages", rule.maxPages, 1],
  ] as const) {
    if (pages !== undefined && (pages < least || pages > MAX_RULE_PAGES)) fail(`${at}.${field}`, `must be from ${least} to ${MAX_RULE_PAGES}`);
  }
  if (rule.minPages !== undefined && rule.maxPages !== undefined && rule.minPages > rule.maxPages) {
    fail(`${at}.max_pages`, "must be at least min_pages, or no document holds the rule");
  }
  if (rule.weight !== undefined && !Number.isFinite(rule.weight)) fail(`${at}.weight`, "must be a finite number");
}

/**
 * Compiles what a data node will run (JSONata expressions, regular expressions; a JSON Schema's
 * text is checked here and compiled apart, in a thread: see compileSchema) and checks what it needs
 * is set; throws the StepError running it would, naming the field.
 */
export function checkDataNode(node: Node, path: string): void {
  const kind = node.kind;
  switch (kind.case) {
    case "extract": {
      const names = new Set<string>();
      const named = (name: string, field: string) => {
        requireText(name, field, "a name");
        // A member of every object: as a key of the output's fields it would set its prototype, not a field.
        if (name === "__proto__") throw new StepError("settings_invalid", `${field}: "__proto__" cannot name a field`, { field });
        if (names.has(name)) throw new StepError("settings_invalid", `${field}: "${name}" is used twice`, { field });
        names.add(name);
      };
      kind.value.fields.forEach((field, index) => {
        const at = `${path}.fields[${index}]`;
        named(field.name, `${at}.name`);
        if (field.pattern === "" && field.labels.length === 0) throw new StepError("settings_invalid", `${at}: set a pattern or labels`, { field: at });
        if (field.pattern !== "") compilePattern(field.pattern, `${at}.pattern`);
        field.labels.forEach((label, labelIndex) => checkPhrase(label, `${at}.labels[${labelIndex}]`));
        checkCurrency(field.currency, `${at}.currency`);
      });
      kind.value.tables.forEach((table, index) => {
        named(table.name, `${path}.tables[${index}].name`);
        checkCurrency(table.currency, `${path}.tables[${index}].currency`);
      });
      return;
    }
    case "classify":
      kind.value.classes.forEach((documentClass, classIndex) => {
        requireText(documentClass.name, `${path}.classes[${classIndex}].name`, "a name");
        documentClass.rules.forEach((rule, ruleIndex) => checkClassifyRule(rule, `${path}.classes[${classIndex}].rules[${ruleIndex}]`));
      });
      return;
    case "transform":
      requireText(kind.value.expression, `${path}.expression`, "an expression");
      compileExpression(kind.value.expression, `${path}.expression`);
      return;
    case "validate":
      checkSchemaText(kind.value.schema, `${path}.schema`);
      if (kind.value.select !== "") compileExpression(kind.value.select, `${path}.select`);
      return;
    case "httpRequest":
      requireText(kind.value.url, `${path}.url`, "a URL expression");
      compileExpression(kind.value.url, `${path}.url`);
      if (kind.value.body !== "") compileExpression(kind.value.body, `${path}.body`);
      return;
    case "email":
      requireText(kind.value.to, `${path}.to`, "a recipients expression");
      requireText(kind.value.subject, `${path}.subject`, "a subject expression");
      for (const [field, source] of [
        ["to", kind.value.to],
        ["subject", kind.value.subject],
        ["body", kind.value.body],
      ] as const) {
        if (source !== "") compileExpression(source, `${path}.${field}`);
      }
      return;
  }
}
