import { type ClassifyNode, type ClassifyRule, KeywordMatch } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compilePattern, testPattern } from "../../sandbox/patterns.ts";
import { type PatternBudget, patternBudget } from "../../sandbox/pool.ts";
import { type NodeContext, type ParsedDocument, requireParsedDocument, type RunData } from "../run-data.ts";

export interface ClassifyOutput {
  class: string;
  /** The winning class's score; 0 for the otherwise class. */
  score: number;
  /** Every class's score, in the node's order. */
  scores: Record<string, number>;
}

const DEFAULT_OTHERWISE = "other";

/** A keyword or phrase as a whole word or phrase, case-insensitively, any run of space matching its spaces. */
function keywordPattern(keyword: string): RegExp {
  const words = keyword
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\s+");
  return new RegExp(`(?<![\\p{L}\\p{N}])${words}(?![\\p{L}\\p{N}])`, "iu");
}

interface Subject {
  /** What the node's patterns may spend together. */
  budget: PatternBudget;
  document: ParsedDocument;
  text: string;
  fileName: string;
  format: string;
}

/** Whether every condition the rule sets holds for the document. */
async function ruleHolds(rule: ClassifyRule, subject: Subject, path: string): Promise<boolean> {
  if (rule.formats.length > 0 && !rule.formats.includes(subject.format)) return false;
  if (rule.minPages !== undefined && subject.document.pageCount < rule.minPages) return false;
  if (rule.maxPages !== undefined && subject.document.pageCount > rule.maxPages) return false;
  if (
    rule.fileNamePattern !== ""
    && !(await testPattern(compilePattern(rule.fileNamePattern, `${path}.file_name_pattern`), subject.fileName, `${path}.file_name_pattern`, subject.budget))
  ) {
    return false;
  }
  if (rule.keywords.length > 0) {
    const found = (keyword: string) => keywordPattern(keyword).test(subject.text);
    const holds = rule.match === KeywordMatch.ALL ? rule.keywords.every(found) : rule.keywords.some(found);
    if (!holds) return false;
  }
  if (rule.pattern !== "" && !(await testPattern(compilePattern(rule.pattern, `${path}.pattern`), subject.text, `${path}.pattern`, subject.budget)))
    return false;
  return true;
}

/**
 * Scores each class by the weights of its rules that hold, and gives the class with the highest
 * score above zero (the first listed on a tie), else the otherwise class. Rules read the parse
 * output's text and page count and the run's file name and format.
 */
export async function runClassify(node: ClassifyNode, runData: RunData, context: NodeContext, path = "classify"): Promise<ClassifyOutput> {
  const document = requireParsedDocument(runData, node.source);
  const subject: Subject = {
    budget: patternBudget(context),
    document,
    text: document.pages.map((page) => page.text).join("\n"),
    fileName: context.document.name,
    format: document.format ?? context.document.format,
  };
  const scores: Record<string, number> = {};
  let best: { name: string; score: number } | undefined;
  for (const [classIndex, documentClass] of node.classes.entries()) {
    let score = 0;
    for (const [ruleIndex, rule] of documentClass.rules.entries()) {
      if (await ruleHolds(rule, subject, `${path}.classes[${classIndex}].rules[${ruleIndex}]`)) score += rule.weight ?? 1;
    }
    scores[documentClass.name] = score;
    if (score > 0 && (best === undefined || score > best.score)) best = { name: documentClass.name, score };
  }
  return best === undefined ? { class: node.otherwise || DEFAULT_OTHERWISE, score: 0, scores } : { class: best.name, score: best.score, scores };
}
