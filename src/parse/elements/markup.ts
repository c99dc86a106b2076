import { type Handler, Parser, type ParserOptions } from "htmlparser2";

/** Deeper than any real document nests its elements (Word tables in tables, HTML layouts). */
const MAX_MARKUP_DEPTH = 512;

/** Markup nested deeper than MAX_MARKUP_DEPTH: hostile, or not a document. */
export class MarkupTooDeepError extends Error {
  override name = "MarkupTooDeepError";
}

/**
 * Runs htmlparser2 over `markup` with `handler`, refusing nesting past MAX_MARKUP_DEPTH: the parser
 * keeps its open elements with Array#unshift, so thousands of unclosed tags would cost quadratic time.
 */
export function parseMarkup(markup: string, handler: Partial<Handler>, options: ParserOptions): void {
  let depth = 0;
  const parser = new Parser(
    {
      ...handler,
      onopentag(name, attributes, implied) {
        depth++;
        if (depth > MAX_MARKUP_DEPTH) throw new MarkupTooDeepError(`its markup nests deeper than ${MAX_MARKUP_DEPTH} elements`);
        handler.onopentag?.(name, attributes, implied);
      },
      onclosetag(name, implied) {
        depth--;
        handler.onclosetag?.(name, implied);
      },
    },
    options,
  );
  parser.end(markup);
}
