// The parts of busboy (as @fastify/busboy ships it) that src/inbound/http/multipart.ts reads a body
// with; they are CommonJS modules without types of their own.
declare module "@fastify/busboy/deps/streamsearch/sbmh.js" {
  import { EventEmitter } from "node:events";
  /**
   * Streaming Boyer-Moore-Horspool search for `needle`; `push` reports, through "info" events, the
   * bytes between matches (isMatch false) and each match (isMatch true, with the bytes before it).
   */
  class StreamSearch extends EventEmitter {
    constructor(needle: string | Buffer);
    push(chunk: Buffer, position?: number): number;
    on(event: "info", listener: (isMatch: boolean, data?: Buffer, start?: number, end?: number) => void): this;
  }
  export default StreamSearch;
}

declare module "@fastify/busboy/deps/dicer/lib/HeaderParser.js" {
  import { EventEmitter } from "node:events";
  /** A part's header block, pushed in pieces; emits "header" (names in lower case) at the blank line. */
  class HeaderParser extends EventEmitter {
    constructor(options: { maxHeaderPairs?: number; maxHeaderSize?: number });
    /** Where in `data` the header block ended, when it did. */
    push(data: Buffer): number | undefined;
    reset(): void;
    on(event: "header", listener: (header: Record<string, string[]>) => void): this;
  }
  export default HeaderParser;
}

declare module "@fastify/busboy/lib/utils/parseParams.js" {
  /**
   * A header value's parts: the value itself first, then [name, value] pairs, quoted strings
   * unescaped and RFC 2231/5987 values decoded in their charset (malformed UTF-8 as U+FFFD).
   */
  function parseParams(value: string): (string | [string, string | undefined] | undefined)[];
  export default parseParams;
}

declare module "@fastify/busboy/lib/utils/basename.js" {
  /** A path's last part ("/" and "\" both separate); "." and ".." give "". */
  function basename(path: string): string;
  export default basename;
}
