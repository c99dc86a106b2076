import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { serviceError } from "./errors.ts";

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;

/** The page size to use: 0 means the default, larger than the maximum means the maximum (AIP-158). */
function pageSize(requested: number): number {
  if (requested < 0) throw serviceError(Code.InvalidArgument, "invalid_argument", "page_size must not be negative", { field: "page_size" });
  return requested === 0 ? DEFAULT_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
}

export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/** What every list request carries. */
export interface PageRequest {
  pageSize: number;
  pageToken: string;
}

/**
 * The steps every list RPC takes, in this order: the page size (checked), the page token (checked
 * against `query`, the list's name and filters, so a token cannot be replayed on another query),
 * `check` (what the list belongs to exists, else NotFound), then `load` of size + 1 rows after the
 * token's id, cut to a page with the next page's token.
 */
export async function listPage<T extends { id: string }>(
  pageTokens: PageTokens,
  request: PageRequest,
  query: object,
  load: (afterId: string | undefined, limit: number) => Promise<T[]>,
  check: () => Promise<void> = async () => {},
): Promise<Page<T>> {
  const size = pageSize(request.pageSize);
  const afterId = pageTokens.after(request.pageToken, query);
  await check();
  return pageTokens.page(await load(afterId, size + 1), size, query);
}

/**
 * Opaque page tokens: the id of the last item returned, bound to the query it came from and signed
 * (HMAC-SHA256), so a token that was altered or belongs to another query is InvalidArgument.
 */
export class PageTokens {
  readonly #secret: Buffer;

  /** Without a configured secret, one is made per process: tokens then work only where they were issued. */
  constructor(secret: string | undefined) {
    this.#secret = secret === undefined ? randomBytes(32) : Buffer.from(secret);
  }

  /** Cuts `rows` (fetched with limit size + 1) to a page and makes the token of the next one. */
  page<T extends { id: string }>(rows: T[], size: number, query: unknown): Page<T> {
    if (rows.length <= size) return { items: rows, nextPageToken: "" };
    const items = rows.slice(0, size);
    return { items, nextPageToken: this.#encode(items[items.length - 1]!.id, query) };
  }

  /** The id to continue after, or undefined for the first page. `query` must equal the one given to page(). */
  after(token: string, query: unknown): string | undefined {
    if (token === "") return undefined;
    const [payload = "", signature = ""] = token.split(".");
    const expected = this.#sign(payload, query);
    const given = Buffer.from(signature, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw serviceError(Code.InvalidArgument, "page_token_invalid", "page_token is not one this list returned for this query", { field: "page_token" });
    }
    return Buffer.from(payload, "base64url").toString("utf8");
  }

  #encode(lastId: string, query: unknown): string {
    const payload = Buffer.from(lastId).toString("base64url");
    return `${payload}.${this.#sign(payload, query).toString("base64url")}`;
  }

  #sign(payload: string, query: unknown): Buffer {
    return createHmac("sha256", this.#secret).update(JSON.stringify(query)).update("\0").update(payload).digest();
  }
}
