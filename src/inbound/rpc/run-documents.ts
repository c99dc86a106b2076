import { pipeline } from "node:stream/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { errorInfoOf } from "../../platform/error-info.ts";
import { isUuid } from "../../platform/ids.ts";
import type { FindRunDocument, RunDocument } from "../../api/run-documents.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";

/** `GET /run-documents/<organizationId>/<runId>`: a run's stored document, for the console's Review page. */
const RUN_DOCUMENTS_PATH = "/run-documents/";

export type Handler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
type Response = Parameters<Handler>[1];

/**
 * The formats a browser shows by itself and that run no script: PDF (its own viewer) and raster
 * pictures. Their type comes from the format detected in the bytes, never from what the client sent,
 * so a document cannot pass for another kind; every other format is a download.
 */
const INLINE_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The document is only data: nothing in it may load, run or be framed, and no copy is kept. */
const DOCUMENT_HEADERS = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "private, no-store",
};

export const HTTP_STATUS: Partial<Record<Code, number>> = {
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unavailable]: 503,
};

/** A Content-Disposition naming the file as the client sent it (RFC 6266, any character through filename*). */
function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export function refuse(response: Response, status: number, body: { code: string; reason: string; message: string }): void {
  response.writeHead(status, { ...DOCUMENT_HEADERS, "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

export function headersOf(request: Parameters<Handler>[0]): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return headers;
}

/**
 * Serves a run's stored document to whoever may read the run, with the console's credentials
 * (INTERNAL_TOKEN, a service token, or the session cookie with the console's header: a plain link
 * from another site carries neither). The console fetches it and shows PDFs and pictures inline;
 * other paths go to `next`. A process without the document store (services alone) answers 503.
 */
export function runDocumentsHandler(findRunDocument: FindRunDocument, store: () => DocumentStore | undefined, next: Handler): Handler {
  return async (request, response) => {
    const path = new URL(request.url ?? "/", "http://internal").pathname;
    if (!path.startsWith(RUN_DOCUMENTS_PATH)) return next(request, response);
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" });
      return response.end();
    }
    const [organizationId = "", runId = "", ...rest] = path.slice(RUN_DOCUMENTS_PATH.length).split("/");
    if (!isUuid(organizationId) || !isUuid(runId) || rest.length > 0) {
      return refuse(response, 404, { code: "not_found", reason: "run_not_found", message: "run not found" });
    }
    const documents = store();
    if (documents === undefined) {
      return refuse(response, 503, { code: "unavailable", reason: "document_store_unavailable", message: "this process has no document store" });
    }
    let document: RunDocument;
    let body: AsyncIterable<Buffer> | undefined;
    try {
      document = await findRunDocument(headersOf(request), organizationId, runId);
      if (request.method === "GET") body = await documents.open(document);
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") {
        return refuse(response, 404, { code: "not_found", reason: "document_not_found", message: "the run's document is no longer stored" });
      }
      const refusal = ConnectError.from(error);
      return refuse(response, HTTP_STATUS[refusal.code] ?? 500, {
        code: Code[refusal.code].toLowerCase(),
        reason: errorInfoOf(refusal)?.reason ?? "internal",
        message: refusal.rawMessage,
      });
    }
    const type = INLINE_TYPES[document.format];
    response.writeHead(200, {
      ...DOCUMENT_HEADERS,
      "content-type": type ?? "application/octet-stream",
      "content-disposition": contentDisposition(type === undefined ? "attachment" : "inline", document.name),
      "content-length": String(document.size),
    });
    if (body === undefined) return response.end();
    await pipeline(body, response).catch(() => response.destroy());
  };
}
