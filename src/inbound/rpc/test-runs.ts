import { Code, ConnectError } from "@connectrpc/connect";
import { isBaseName, isPrintable, isTooLongFileName } from "../../documents/formats/file-names.ts";
import { acceptStaged, fileNameTooLong, stageStream } from "../http/upload.ts";
import { Problem } from "../http/problems.ts";
import { errorInfoOf } from "../../platform/error-info.ts";
import { isUuid } from "../../platform/ids.ts";
import type { TestRuns } from "../../api/test-runs.ts";
import { type DocumentStore, FileTooLargeError } from "../../data/storage/document-store.ts";
import { type Handler, HTTP_STATUS, headersOf, refuse } from "./run-documents.ts";

/**
 * `POST /test-runs/<organizationId>/<pipeId>`: the console's "Test with a document". The body is the
 * file's bytes, its Content-Type the file's type, `X-File-Name` its name (URL-encoded). Answers 201
 * `{"runId": "…"}`; refusals are `{code, reason, message}` like the document route's.
 */
const TEST_RUNS_PATH = "/test-runs/";
/** The time a test document has to arrive whole; a slower upload is cut off and frees its turn. */
const UPLOAD_BUDGET_MS = 60_000;

/** The refusal a staging or detection error becomes: the edge's problem codes as reasons. */
function refusalOf(error: unknown, maxBytes: number): { status: number; code: string; reason: string; message: string } {
  if (error instanceof FileTooLargeError) {
    return { status: 400, code: "invalid_argument", reason: "file_too_large", message: `the file exceeds this pipe's limit of ${maxBytes} bytes` };
  }
  if (error instanceof Problem) return { status: error.statusCode, code: "invalid_argument", reason: error.code, message: error.message };
  const refusal = ConnectError.from(error);
  return {
    status: HTTP_STATUS[refusal.code] ?? 500,
    code: Code[refusal.code].toLowerCase(),
    reason: errorInfoOf(refusal)?.reason ?? "internal",
    message: refusal.rawMessage,
  };
}

/** The X-File-Name header decoded; a name that is not URL-encoded text or holds control characters is refused as the edge refuses it. */
function fileName(header: string | string[] | undefined): string {
  if (header === undefined || header === "") return "document";
  let name: string;
  try {
    name = decodeURIComponent(String(header));
  } catch {
    name = "\0";
  }
  if (!isPrintable(name) || !isBaseName(name))
    throw new Problem("file_name_invalid", "X-File-Name must be a URL-encoded file name without control characters or folders");
  if (isTooLongFileName(name)) throw fileNameTooLong(name);
  return name;
}

/**
 * Stores a document the console sends and queues a test run of the pipe for it (see TestRuns), for
 * whoever may change the pipe, with the console's credentials; other paths go to `next`. The file
 * is judged as the pipe's trigger judges submissions (formats, size, not empty).
 */
export function testRunsHandler(testRuns: TestRuns, store: () => DocumentStore | undefined, next: Handler): Handler {
  return async (request, response) => {
    const path = new URL(request.url ?? "/", "http://internal").pathname;
    if (!path.startsWith(TEST_RUNS_PATH)) return next(request, response);
    if (request.method !== "POST") {
      response.writeHead(405, { allow: "POST" });
      return response.end();
    }
    const [organizationId = "", pipeId = "", ...rest] = path.slice(TEST_RUNS_PATH.length).split("/");
    if (!isUuid(organizationId) || !isUuid(pipeId) || rest.length > 0) {
      return refuse(response, 404, { code: "not_found", reason: "pipe_not_found", message: "pipe not found" });
    }
    const documents = store();
    if (documents === undefined) {
      return refuse(response, 503, { code: "unavailable", reason: "document_store_unavailable", message: "this process has no document store" });
    }
    let maxBytes = 0;
    let release = () => {};
    const budget = setTimeout(() => request.destroy(new Error(`the test document did not arrive within ${UPLOAD_BUDGET_MS / 1000} s`)), UPLOAD_BUDGET_MS);
    try {
      const target = await testRuns.target(headersOf(request), organizationId, pipeId);
      release = testRuns.begin(target);
      maxBytes = target.maxBytes;
      const name = fileName(request.headers["x-file-name"]);
      const contentType = String(request.headers["content-type"] ?? "application/octet-stream");
      const received = await acceptStaged(documents, await stageStream(documents, request, name, contentType, maxBytes), target.acceptedFormats);
      await documents.commit(organizationId, received.staged);
      const file = { name, contentType, format: received.format, size: BigInt(received.staged.size), sha256: received.staged.sha256 };
      const runId = await testRuns.queue(target, file, request.socket.remoteAddress ?? "");
      response.writeHead(201, { "content-type": "application/json", "cache-control": "no-store" });
      response.end(JSON.stringify({ runId }));
    } catch (error) {
      const { status, ...body } = refusalOf(error, maxBytes);
      if (status === 429) response.setHeader("retry-after", "1");
      // The rest of a refused body is not read: the connection closes after the answer.
      refuse(response, status, body);
      request.resume();
    } finally {
      clearTimeout(budget);
      release();
    }
  };
}
