import { randomUUID } from "node:crypto";
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionError, FastifyBaseLogger, FastifyInstance } from "fastify";
import { Problem, problemDocument } from "./problems.ts";

// Answers written by hand for what Node refuses before Fastify sees a request: still problem documents.

/**
 * Requests Node's HTTP parser refuses (a malformed request line or header, oversized headers, a
 * stalled client) never reach a route; they get a problem document too, then the connection closes.
 * There is no parsed path, so `instance` is empty. Fastify calls it with the app as `this`: an
 * answer written is logged at info with its id as `reqId`, as a request's own lines are, so the id a
 * client quotes finds it.
 */
export function answerClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const problem =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new Problem("headers_too_large", "the request's headers exceed the server's limit")
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new Problem("request_timeout", "the request was not received in time")
        : new Problem("bad_request", "the request is not well-formed HTTP/1.1");
  const traceId = randomUUID();
  const body = JSON.stringify(problemDocument(problem, "", traceId));
  // A response to HEAD has no content, even when the rest of the request could not be parsed.
  const isHead = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString("latin1") === "HEAD ";
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${problem.statusCode} ${STATUS_CODES[problem.statusCode]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${traceId}\r\nConnection: close\r\n\r\n${isHead ? "" : body}`,
    );
    // Only an answer the client got has an id it can quote.
    logRefusal(this.log, traceId, problem, socket.remoteAddress);
  }
  socket.destroy(error);
}

/** Node itself answers an Expect other than 100-continue with an empty 417, unless this listens; logged as answerClientError's are. */
export function answerExpectation(log: FastifyBaseLogger, request: IncomingMessage, response: ServerResponse): void {
  const traceId = randomUUID();
  const problem = new Problem("expectation_failed", "only Expect: 100-continue is supported");
  logRefusal(log, traceId, problem, request.socket.remoteAddress);
  const body = JSON.stringify(problemDocument(problem, (request.url ?? "").split("?")[0]!, traceId));
  response
    .writeHead(problem.statusCode, {
      "content-type": "application/problem+json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "x-request-id": traceId,
      connection: "close",
    })
    .end(body);
}

/** One line for an answer Fastify never saw, with the id the client was given. */
function logRefusal(log: FastifyBaseLogger, traceId: string, problem: Problem, remoteAddress: string | undefined): void {
  log.info({ reqId: traceId, code: problem.code, statusCode: problem.statusCode, remoteAddress }, "request refused before it reached a route");
}
