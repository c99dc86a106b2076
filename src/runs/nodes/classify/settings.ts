import type { ClassifyNode, ClassifyRule } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { FORMAT_IDS, isFormatId } from "../../../documents/formats/format-ids.ts";
import { compilePattern } from "../../sandbox/patterns.ts";
import { checkPhrase, requireText, settingsInvalid } from "../settings.ts";

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
    throw settingsInvalid(field, message);
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

/** Each class is named, and each of its rules sets a condition that can hold. */
export function checkClassifySettings(classify: ClassifyNode, path: string): void {
  classify.classes.forEach((documentClass, classIndex) => {
    requireText(documentClass.name, `${path}.classes[${classIndex}].name`, "a name");
    documentClass.rules.forEach((rule, ruleIndex) => checkClassifyRule(rule, `${path}.classes[${classIndex}].rules[${ruleIndex}]`));
  });
}
