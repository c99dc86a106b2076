import type { Element } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { classifyText } from "./plain-text.ts";
import type { TableBudget } from "./table.ts";

const TITLE_PLACEHOLDERS: ReadonlyMap<string, number> = new Map([
  ["title", 1],
  ["ctrTitle", 1],
  ["subTitle", 2],
]);

/**
 * A PresentationML slide's elements (page = its slide number): title placeholders as Titles, the
 * paragraphs of a body placeholder as ListItems (unless bullets are turned off), a text box's
 * bulleted paragraphs as ListItems and the rest as text, tables as rows of cells (while the
 * presentation's `tables` budget lasts).
 */
export function slideElements(xml: string, slide: number, tables: TableBudget): Element[] {
  const elements: Element[] = [];
  let placeholder: string | undefined;
  let inShape = false;
  let paragraph: { text: string; bullet?: boolean } | undefined;
  let inText = false;
  let rows: string[][] | undefined;
  let cell: string[] | undefined;
  const endParagraph = () => {
    const text = paragraph?.text.trim() ?? "";
    const bullet = paragraph?.bullet;
    paragraph = undefined;
    if (text === "") return;
    if (cell !== undefined) {
      cell.push(text);
      return;
    }
    const level = placeholder === undefined ? undefined : TITLE_PLACEHOLDERS.get(placeholder);
    if (level !== undefined) elements.push({ type: "Title", text: text.replace(/\s+/g, " "), level, page: slide });
    else if (bullet ?? (placeholder === "body" || placeholder === "")) elements.push({ type: "ListItem", text, page: slide });
    else elements.push({ ...classifyText(text, !text.includes("\n")), page: slide });
  };
  scanMarkup(
    xml,
    {
      onopentag(name, attributes) {
        switch (name) {
          case "p:sp":
            inShape = true;
            placeholder = undefined;
            break;
          case "p:ph":
            // A placeholder without a type is a body (content) placeholder.
            if (inShape) placeholder = attributes.get("type") ?? "";
            break;
          case "a:tbl":
            rows = [];
            break;
          case "a:tr":
            rows?.push([]);
            break;
          case "a:tc":
            cell = [];
            break;
          case "a:p":
            paragraph = { text: "" };
            break;
          case "a:buNone":
            if (paragraph !== undefined) paragraph.bullet = false;
            break;
          case "a:buChar":
          case "a:buAutoNum":
            if (paragraph !== undefined) paragraph.bullet = true;
            break;
          case "a:t":
            inText = true;
            break;
          case "a:br":
            if (paragraph !== undefined) paragraph.text += "\n";
            break;
        }
      },
      ontext(text) {
        if (inText && paragraph !== undefined) paragraph.text += text;
      },
      onclosetag(name) {
        if (name === "a:t") inText = false;
        else if (name === "a:p") endParagraph();
        else if (name === "a:tc" && cell !== undefined) {
          rows?.at(-1)?.push(cell.join("\n"));
          cell = undefined;
        } else if (name === "a:tbl" && rows !== undefined) {
          const table = tables.table(rows, { page: slide });
          if (table !== undefined) elements.push(table);
          rows = undefined;
        } else if (name === "p:sp") {
          inShape = false;
          placeholder = undefined;
        }
      },
    },
    { xml: true },
  );
  return elements;
}
