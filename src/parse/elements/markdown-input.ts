import { Lexer, type Token, type Tokens } from "marked";
import { decodeHTML } from "entities";
import { type Element, headingLevel } from "./element.ts";
import { htmlElements } from "./html.ts";
import { tableElement } from "./table.ts";
import { appendAll } from "../../arrays.ts";

/** The elements of a Markdown document, from marked's lexer (CommonMark and GFM): no hand-written Markdown parser. */
export function markdownElements(markdown: string): Element[] {
  const elements: Element[] = [];
  blockElements(new Lexer({ gfm: true }).lex(markdown), elements);
  return elements;
}

function blockElements(tokens: readonly Token[], elements: Element[]): void {
  for (const token of tokens) {
    switch (token.type) {
      case "heading":
        push(elements, { type: "Title", text: inlineText(token.tokens), level: headingLevel((token as Tokens.Heading).depth) });
        break;
      case "paragraph":
      case "text":
        push(elements, { type: "NarrativeText", text: inlineText((token as Tokens.Paragraph | Tokens.Text).tokens ?? [token]) });
        break;
      case "list":
        for (const item of (token as Tokens.List).items) {
          const nested = item.tokens.filter((child) => child.type === "list");
          const own = item.tokens.filter((child) => child.type !== "list");
          push(elements, {
            type: "ListItem",
            text: own.map((child) => inlineText("tokens" in child && child.tokens !== undefined ? child.tokens : [child])).join("\n"),
          });
          blockElements(nested, elements);
        }
        break;
      case "table": {
        const table = token as Tokens.Table;
        const rows = [table.header.map((cell) => inlineText(cell.tokens)), ...table.rows.map((row) => row.map((cell) => inlineText(cell.tokens)))];
        const element = tableElement(rows);
        if (element !== undefined) elements.push(element);
        break;
      }
      case "code":
        push(elements, { type: "CodeSnippet", text: (token as Tokens.Code).text });
        break;
      case "blockquote":
        blockElements((token as Tokens.Blockquote).tokens, elements);
        break;
      case "html":
        appendAll(elements, htmlElements((token as Tokens.HTML).text));
        break;
    }
  }
}

function push(elements: Element[], element: Element): void {
  const text = element.text.trim();
  if (text !== "") elements.push({ ...element, text });
}

/** The plain text of inline tokens: emphasis, links and code spans reduced to their text, entities decoded. */
function inlineText(tokens: readonly Token[] | undefined): string {
  if (tokens === undefined) return "";
  return tokens
    .map((token) => {
      if (token.type === "br") return "\n";
      if (token.type === "image") return (token as Tokens.Image).text;
      if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length > 0) return inlineText(token.tokens);
      if (token.type === "html") return "";
      return decodeHTML("text" in token && typeof token.text === "string" ? token.text : "");
    })
    .join("");
}
