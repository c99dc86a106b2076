import type { CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import { StreamLanguage, type StringStream } from "@codemirror/language";

const KEYWORDS = new Set(["and", "or", "in", "true", "false", "null", "function"]);

/** JSONata's functions that conditions and transforms use most, offered after a `$`. */
const FUNCTIONS = [
  "$boolean",
  "$contains",
  "$count",
  "$exists",
  "$filter",
  "$join",
  "$keys",
  "$length",
  "$lowercase",
  "$map",
  "$match",
  "$max",
  "$min",
  "$not",
  "$now",
  "$number",
  "$replace",
  "$round",
  "$split",
  "$string",
  "$substring",
  "$sum",
  "$trim",
  "$uppercase",
];

interface TokenState {
  /** Inside a block comment that an earlier line opened. */
  comment: boolean;
}

/** JSONata's tokens for highlighting: strings, numbers, names, $variables and functions, operators, comments, regexes. */
function token(stream: StringStream, state: TokenState): string | null {
  if (state.comment) {
    state.comment = !stream.skipTo("*/");
    if (state.comment) stream.skipToEnd();
    else stream.match("*/");
    return "comment";
  }
  if (stream.eatSpace()) return null;
  if (stream.match("/*")) {
    state.comment = true;
    return token(stream, state) ?? "comment";
  }
  const next = stream.peek();
  if (next === '"' || next === "'") {
    stream.next();
    let escaped = false;
    for (let char = stream.next(); char !== undefined; char = stream.next()) {
      if (char === next && !escaped) break;
      escaped = !escaped && char === "\\";
    }
    return "string";
  }
  if (next === "`") {
    stream.next();
    stream.skipTo("`");
    stream.next();
    return "propertyName";
  }
  if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return "number";
  if (stream.match(/^\$[\w$]*/)) return "variableName.special";
  if (stream.match(/^[A-Za-z_][\w]*/)) return KEYWORDS.has(stream.current()) ? "keyword" : "propertyName";
  if (next === "/" && /[(,=:]\s*$|^\s*$/.test(stream.string.slice(0, stream.pos))) {
    stream.next();
    stream.skipTo("/");
    stream.next();
    stream.match(/^[im]*/);
    return "regexp";
  }
  if (stream.match(/^(:=|~>|!=|<=|>=|\.\.|\?:|\?\?|[-+*/%&=<>!?:.,;|^#@])/)) return "operator";
  if (stream.match(/^[[\](){}]/)) return "bracket";
  stream.next();
  return null;
}

export const jsonataLanguage = StreamLanguage.define<TokenState>({
  name: "jsonata",
  startState: () => ({ comment: false }),
  token,
  languageData: { commentTokens: { block: { open: "/*", close: "*/" } } },
});

/**
 * Completes what is typed before the cursor: a run-data path (`paths`, such as
 * "extract.fields.total") or, after a `$`, a function.
 */
export function completeRunData(paths: readonly string[]) {
  return (context: CompletionContext): CompletionResult | null => {
    const word = context.matchBefore(/[$\w.`]*/);
    if (word === null || (word.from === word.to && !context.explicit)) return null;
    if (word.text.startsWith("$")) return { from: word.from, options: FUNCTIONS.map((label) => ({ label, type: "function", apply: `${label}(` })) };
    return { from: word.from, options: paths.map((label) => ({ label, type: "property" })), validFor: /^[\w.`]*$/ };
  };
}
