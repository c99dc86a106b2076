import { decodeHTML, decodeXML } from "entities";

/** Deeper than any real document nests its elements (Word tables in tables, HTML layouts). */
const MAX_MARKUP_DEPTH = 512;

/** Markup nested deeper than MAX_MARKUP_DEPTH: hostile, or not a document. */
export class MarkupTooDeepError extends Error {
  override name = "MarkupTooDeepError";
}

/** A start tag's attributes, read from its source only when asked for. */
export interface TagAttributes {
  /** The decoded value of one attribute (an attribute without a value is ""). */
  get(name: string): string | undefined;
  /** Every attribute, by name. */
  all(): Record<string, string>;
}

/** What a scan reports, in document order. Tag names are lowercase in HTML mode, as written in XML mode. */
export interface MarkupHandler {
  onopentag?(name: string, attributes: TagAttributes): void;
  /** Text with character references decoded; a run of text may come in several pieces. */
  ontext?(text: string): void;
  onclosetag?(name: string): void;
  /** A comment (its content is never text). */
  oncomment?(): void;
}

export interface ScanOptions {
  /**
   * XML (OOXML, OpenDocument, EPUB's package files): names as written, `/>` closes, the XML
   * entities. HTML (the default): names folded to lowercase, void elements, raw-text elements
   * (`script`, `style`...), the HTML entities, and the end tags HTML leaves out (`<p>a<p>b`, `<li>`,
   * table cells) implied, as browsers imply them.
   */
  xml?: boolean;
  /** HTML: read the tags as a flat stream, with no open-element stack (and so no nesting limit). */
  flat?: boolean;
}

const GT = 0x3e;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/** Whitespace, `/` or `>`: where a tag or attribute name ends. */
export function endsName(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d || code === 0x0c || code === SLASH || code === GT;
}

/** A letter: what an HTML tag name starts with (`<` followed by anything else is text). */
function isLetter(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
}

/** HTML elements that never have content or an end tag. */
const VOID = new Set([
  "area",
  "base",
  "basefont",
  "bgsound",
  "br",
  "col",
  "embed",
  "frame",
  "hr",
  "image",
  "img",
  "input",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);
/**
 * HTML elements whose content is raw text, up to their own end tag; `title` and `textarea` decode
 * references in it. (`iframe`, `noembed`, `noframes` and `xmp` are read as markup, as htmlparser2
 * reads them: their markup is not shown as text.)
 */
const RAW_TEXT = new Set(["script", "style", "title", "textarea"]);
const ESCAPABLE_RAW_TEXT = new Set(["title", "textarea"]);
/** Each raw-text element's end tag, any case, ended by a space, "/" or ">" (global: set lastIndex before exec). */
const RAW_TEXT_ENDS = new Map([...RAW_TEXT].map((name) => [name, new RegExp(`</${name}[\\s/>]`, "gi")]));

const CLOSES_P = new Set(["p"]);
const TABLE_SECTION = new Set(["thead", "tbody"]);
const RUBY = new Set(["rt", "rp"]);
const FORM_CONTROLS = new Set(["input", "option", "optgroup", "select", "button", "datalist", "textarea"]);
/** The open elements that opening an element closes first (the end tags HTML lets a page leave out). */
const OPEN_IMPLIES_CLOSE: ReadonlyMap<string, ReadonlySet<string>> = new Map<string, ReadonlySet<string>>([
  ["tr", new Set(["tr", "th", "td"])],
  ["th", new Set(["th"])],
  ["td", new Set(["thead", "th", "td"])],
  ["body", new Set(["head", "link", "script"])],
  ["li", new Set(["li"])],
  ["option", new Set(["option"])],
  ["optgroup", new Set(["optgroup", "option"])],
  ["dd", new Set(["dt", "dd"])],
  ["dt", new Set(["dt", "dd"])],
  ["rt", RUBY],
  ["rp", RUBY],
  ["tbody", TABLE_SECTION],
  ["tfoot", TABLE_SECTION],
  ...["select", "input", "output", "button", "datalist", "textarea"].map((name): [string, ReadonlySet<string>] => [name, FORM_CONTROLS]),
  ...[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "pre",
    "section",
    "table",
    "ul",
  ].map((name): [string, ReadonlySet<string>] => [name, CLOSES_P]),
]);

/** What an HTML start tag does beyond opening its element, found with one lookup per tag. */
interface HtmlRules {
  /** The open elements it closes first (OPEN_IMPLIES_CLOSE). */
  closes: ReadonlySet<string> | undefined;
  /** It has no content or end tag (VOID). */
  isVoid: boolean;
  /** A raw-text element's end tag (RAW_TEXT_ENDS). */
  rawTextEnd: RegExp | undefined;
  /** A raw-text element whose references are decoded (ESCAPABLE_RAW_TEXT). */
  escapable: boolean;
}
const HTML_RULES: ReadonlyMap<string, HtmlRules> = new Map(
  [...new Set([...OPEN_IMPLIES_CLOSE.keys(), ...VOID, ...RAW_TEXT])].map((name) => [
    name,
    { closes: OPEN_IMPLIES_CLOSE.get(name), isVoid: VOID.has(name), rawTextEnd: RAW_TEXT_ENDS.get(name), escapable: ESCAPABLE_RAW_TEXT.has(name) },
  ]),
);
/** The rules of the other elements, and of every element in XML. */
const NO_RULES: HtmlRules = { closes: undefined, isVoid: false, rawTextEnd: undefined, escapable: false };

function htmlRules(name: string): HtmlRules {
  return HTML_RULES.get(name) ?? NO_RULES;
}

/** Attributes parsed from a start tag's source on first use. */
class LazyAttributes implements TagAttributes {
  readonly #source: string;
  readonly #html: boolean;
  #parsed: Map<string, string> | undefined;

  constructor(source: string, html: boolean) {
    this.#source = source;
    this.#html = html;
  }

  get(name: string): string | undefined {
    this.#parsed ??= parseAttributes(this.#source, this.#html);
    return this.#parsed.get(name);
  }

  all(): Record<string, string> {
    this.#parsed ??= parseAttributes(this.#source, this.#html);
    return Object.fromEntries(this.#parsed);
  }
}

/** The attributes of a tag that has none. */
const NO_ATTRIBUTES: TagAttributes = { get: () => undefined, all: () => ({}) };

/** The attributes written in a start tag after its name (`source`), read on first use. */
export function tagAttributes(source: string, html: boolean): TagAttributes {
  return source === "" ? NO_ATTRIBUTES : new LazyAttributes(source, html);
}

/** `name="value"`, `name='value'`, `name=value` and bare `name`s; the first of a repeated name wins, as in HTML. */
function parseAttributes(source: string, html: boolean): Map<string, string> {
  const attributes = new Map<string, string>();
  const decode = html ? decodeHTML : decodeXML;
  let at = 0;
  while (at < source.length) {
    while (at < source.length && endsName(source.charCodeAt(at))) at++;
    const start = at;
    while (at < source.length && !endsName(source.charCodeAt(at)) && source.charCodeAt(at) !== EQUALS) at++;
    if (at === start) {
      at++; // a stray "=": skip it
      continue;
    }
    const name = html ? source.slice(start, at).toLowerCase() : source.slice(start, at);
    while (at < source.length && source.charCodeAt(at) <= 0x20) at++;
    let value = "";
    if (source.charCodeAt(at) === EQUALS) {
      at++;
      while (at < source.length && source.charCodeAt(at) <= 0x20) at++;
      const quote = source.charCodeAt(at);
      if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
        const end = source.indexOf(source[at]!, at + 1);
        value = source.slice(at + 1, end === -1 ? source.length : end);
        at = end === -1 ? source.length : end + 1;
      } else {
        const valueStart = at;
        while (at < source.length && source.charCodeAt(at) > 0x20 && source.charCodeAt(at) !== GT) at++;
        value = source.slice(valueStart, at);
      }
    }
    if (!attributes.has(name)) attributes.set(name, value.includes("&") ? decode(value) : value);
  }
  return attributes;
}

/**
 * Where the `>` ending a start or end tag is, searched from `from` (past its name), skipping quoted
 * attribute values, which may hold `>` (a quote only opens a value after "="); the markup's length
 * when the tag is left open.
 */
export function tagEnd(markup: string, from: number): number {
  const length = markup.length;
  let end = from;
  let afterEquals = false;
  while (end < length) {
    const code = markup.charCodeAt(end);
    if (code === GT) return end;
    if (afterEquals && (code === DOUBLE_QUOTE || code === SINGLE_QUOTE)) {
      const quoteEnd = markup.indexOf(markup[end]!, end + 1);
      end = quoteEnd === -1 ? length : quoteEnd + 1;
      afterEquals = false;
      continue;
    }
    if (code === EQUALS) afterEquals = true;
    else if (code > 0x20) afterEquals = false;
    end++;
  }
  return length;
}

/** Whether the character after a `<` starts a comment, CDATA section, declaration or processing instruction. */
export function startsDeclaration(code: number): boolean {
  return code === 0x21 /* ! */ || code === 0x3f /* ? */;
}

/** A comment, CDATA section, declaration or processing instruction, as readDeclaration finds it. */
export interface Declaration {
  /** Just past its end (the markup's length when it is left open). */
  end: number;
  /** It is a comment (`<!-- -->`). */
  comment: boolean;
  /** A CDATA section's content, from and to. */
  cdata?: [number, number];
}

/** The comment, CDATA section (when `cdata` is allowed), declaration or processing instruction whose `<` is at `lt`. */
export function readDeclaration(markup: string, lt: number, cdata: boolean): Declaration {
  const length = markup.length;
  if (markup.startsWith("<!--", lt)) {
    const end = markup.indexOf("-->", lt + 4);
    return { end: end === -1 ? length : end + 3, comment: true };
  }
  if (cdata && markup.startsWith("<![CDATA[", lt)) {
    const end = markup.indexOf("]]>", lt + 9);
    return { end: end === -1 ? length : end + 3, comment: false, cdata: [lt + 9, end === -1 ? length : end] };
  }
  const end = markup.indexOf(">", lt + 2);
  return { end: end === -1 ? length : end + 1, comment: false };
}

/**
 * Reads `markup` once, left to right, reporting tags and text to `handler`. Written for the parse
 * step's documents instead of a general parser (htmlparser2 reads a character at a time through a
 * state machine and builds every attribute): this finds tags with indexOf, reads attributes only
 * when asked, and costs linear time on any input; nesting past MAX_MARKUP_DEPTH throws
 * MarkupTooDeepError. Comments, declarations and processing instructions are skipped; CDATA is
 * text in XML, a comment in HTML.
 */
export function scanMarkup(markup: string, handler: MarkupHandler, options: ScanOptions = {}): void {
  const html = options.xml !== true;
  const decode = html ? decodeHTML : decodeXML;
  const tree = html && options.flat !== true;
  const open: string[] = [];
  let depth = 0;
  const text = (from: number, to: number, raw = false) => {
    if (to <= from || handler.ontext === undefined) return;
    const piece = markup.slice(from, to);
    handler.ontext(!raw && piece.includes("&") ? decode(piece) : piece);
  };
  // Popped before the call: `handler.onclosetag?.(open.pop())` would skip the pop with no handler.
  const close = (name: string) => handler.onclosetag?.(name);
  const openTag = (name: string, source: string, rules: HtmlRules) => {
    if (tree) {
      const closes = rules.closes;
      while (closes !== undefined && open.length > 0 && closes.has(open[open.length - 1]!)) close(open.pop()!);
    }
    handler.onopentag?.(name, tagAttributes(source, html));
    if (rules.isVoid) {
      close(name);
      return;
    }
    if (tree) open.push(name);
    else if (!html) depth++;
    if ((tree ? open.length : depth) > MAX_MARKUP_DEPTH) throw new MarkupTooDeepError(`its markup nests deeper than ${MAX_MARKUP_DEPTH} elements`);
  };
  const closeTag = (name: string) => {
    if (!tree) {
      if (!html) depth = Math.max(0, depth - 1);
      if (!html || !VOID.has(name)) close(name);
      return;
    }
    const index = open.lastIndexOf(name);
    if (index !== -1) {
      while (open.length > index) close(open.pop()!);
    } else if (name === "p" || name === "br") {
      // As browsers read them: a stray </p> is an empty paragraph, a </br> a line break.
      openTag(name, "", htmlRules(name));
      if (name === "p") closeTag(name);
    }
  };

  const length = markup.length;
  let at = 0;
  while (at < length) {
    const lt = markup.indexOf("<", at);
    if (lt === -1) {
      text(at, length);
      break;
    }
    text(at, lt);
    const next = markup.charCodeAt(lt + 1);
    if (startsDeclaration(next)) {
      // In HTML, as in browsers, a CDATA section is skipped as a declaration is.
      const declaration = readDeclaration(markup, lt, !html);
      if (declaration.cdata !== undefined) text(declaration.cdata[0], declaration.cdata[1], true);
      else if (declaration.comment) handler.oncomment?.();
      at = declaration.end;
      continue;
    }
    const closing = next === SLASH;
    const nameStart = closing ? lt + 2 : lt + 1;
    if (!(html ? isLetter(markup.charCodeAt(nameStart)) : nameStart < length && !endsName(markup.charCodeAt(nameStart)))) {
      text(lt, lt + 1); // "<" that starts no tag is text
      at = lt + 1;
      continue;
    }
    let nameEnd = nameStart + 1;
    while (nameEnd < length && !endsName(markup.charCodeAt(nameEnd))) nameEnd++;
    const end = tagEnd(markup, nameEnd);
    if (end >= length) break; // a tag left open at the end: nothing after its "<" is text
    const written = markup.slice(nameStart, nameEnd);
    const name = html ? written.toLowerCase() : written;
    at = end + 1;
    if (closing) {
      closeTag(name);
      continue;
    }
    // "/>" closes the tag unless the "/" ends an unquoted value (`<a href=http://x.com/>`).
    const beforeSlash = markup.charCodeAt(end - 2);
    const selfClosing =
      markup.charCodeAt(end - 1) === SLASH && (end - 1 === nameEnd || beforeSlash <= 0x20 || beforeSlash === DOUBLE_QUOTE || beforeSlash === SINGLE_QUOTE);
    const rules = html ? htmlRules(name) : NO_RULES;
    openTag(name, markup.slice(nameEnd, selfClosing ? end - 1 : end), rules);
    if (selfClosing) {
      if (!rules.isVoid) closeTag(name);
      continue;
    }
    const closer = rules.rawTextEnd;
    if (closer !== undefined) {
      closer.lastIndex = at;
      const match = closer.exec(markup);
      const contentEnd = match === null ? length : match.index;
      text(at, contentEnd, !rules.escapable);
      const tagEnd = match === null ? -1 : markup.indexOf(">", contentEnd);
      at = tagEnd === -1 ? length : tagEnd + 1;
      closeTag(name);
    }
  }
  if (tree) while (open.length > 0) close(open.pop()!);
}
