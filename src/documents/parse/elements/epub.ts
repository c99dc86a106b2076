import { posix } from "node:path";
import { readParts } from "../zip.ts";
import type { Element } from "./element.ts";
import { readHtml } from "./html.ts";
import { TableBudget } from "./table.ts";
import { scanMarkup } from "./markup.ts";
import { MAX_ELEMENTS } from "./structured.ts";
import { MAX_TEXT_BYTES } from "../text.ts";
import { appendAll } from "../../../platform/arrays.ts";

const CONTAINER = "META-INF/container.xml";

/** An EPUB's text (its chapters in reading order, separated by a blank line) and its elements. */
export interface ElectronicBook {
  text: string;
  elements: Element[];
  /** The chapters read, in the spine's order (each once; none past what the output keeps). */
  chapterCount: number;
}

/** The attributes of every `tag` element of an XML document, in order. */
function tagsOf(xml: string, tag: string): Record<string, string>[] {
  const found: Record<string, string>[] = [];
  scanMarkup(
    xml,
    {
      onopentag(name, attributes) {
        if (name === tag) found.push(attributes.all());
      },
    },
    { xml: true },
  );
  return found;
}

/**
 * Reads an EPUB: META-INF/container.xml names the package document (OPF), whose spine lists the
 * chapters in reading order; each chapter (XHTML) gives its elements as HTML does. The whole package
 * is read through the bounded zip reader, chapters and all.
 */
export function readElectronicBook(bytes: Uint8Array): ElectronicBook {
  const parts = readParts(bytes, (name) => name === CONTAINER || /\.(opf|xhtml|html|htm)$/i.test(name));
  const container = parts.get(CONTAINER);
  if (container === undefined) throw new Error(`it has no ${CONTAINER}`);
  const packagePath = tagsOf(container, "rootfile")[0]?.["full-path"];
  const opf = packagePath === undefined ? undefined : parts.get(packagePath);
  if (packagePath === undefined || opf === undefined) throw new Error("its container names no package document");
  const base = posix.dirname(packagePath);
  const manifest = new Map(tagsOf(opf, "item").map((item) => [item.id ?? "", item.href ?? ""]));
  const elements: Element[] = [];
  const texts: string[] = [];
  // The chapters' tables share one budget, as one document's.
  const tables = new TableBudget();
  const read = new Set<string>();
  let characters = 0;
  for (const { idref = "" } of tagsOf(opf, "itemref")) {
    const href = manifest.get(idref);
    const path = href === undefined ? undefined : posix.normalize(posix.join(base, decodeURIComponent(href.split("#")[0]!)));
    const chapter = path === undefined ? undefined : parts.get(path);
    // A chapter is read once, however often the spine lists it (a 1 KB package listing one 200 KB
    // chapter 2,000 times made 400 MB of text); past what the output keeps, no more are read.
    if (chapter === undefined || read.has(path!) || characters > MAX_TEXT_BYTES || elements.length > MAX_ELEMENTS) continue;
    read.add(path!);
    const chapterRead = readHtml(chapter, tables);
    appendAll(elements, chapterRead.elements);
    const text = chapterRead.text.trim();
    characters += text.length;
    if (text !== "") texts.push(text);
  }
  return { text: texts.join("\n\n"), elements, chapterCount: read.size };
}
