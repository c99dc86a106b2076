import type { IncomingMessage } from "node:http";
import { ConnectError } from "@connectrpc/connect";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { Problem, problemDocument, problemFromConnectError, type ProblemCode } from "./problems.ts";

// Any error of a request as the problem document its client gets.

/** Fastify's own errors (routing, body parsing, validation) as problems. */
function problemFromFastifyError(error: FastifyError): Problem {
  const status = error.statusCode ?? 500;
  if (error.validation !== undefined) return new Problem("bad_request", error.message);
  if (status >= 500) return new Problem("internal_error", "the server could not process the request", {}, {}, error);
  const byStatus: Partial<Record<number, ProblemCode>> = { 404: "not_found", 405: "method_not_allowed", 413: "bad_request", 415: "bad_request" };
  return new Problem(byStatus[status] ?? "bad_request", error.message);
}

export function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof ConnectError) return problemFromConnectError(error);
  if (error instanceof Error && "statusCode" in error) return problemFromFastifyError(error as FastifyError);
  return new Problem("internal_error", "the server could not process the request", {}, {}, error);
}

/** How long a connection whose request body was refused stays half-open, so its client can read the answer. */
const LINGER_MS = 2_000;

/**
 * A lingering close (as Apache and nginx do) for a connection whose request body is left unread.
 * Node answers `Connection: close` with destroySoon(): FIN, then at once a close that, with unread
 * bytes in the kernel, sends a TCP reset, and a client still busy sending its body can lose the
 * answer to it. Here the socket stops reading (nothing more of the body is taken), sends FIN after
 * the answer, and is destroyed only after a grace period: by then the client has read the answer
 * and stopped sending.
 */
function closeWithoutDraining(request: IncomingMessage): void {
  // Node drains ("dumps") a body nobody has read once the response is sent; a read marks it as
  // being read, and backpressure then stops the socket when the request's small buffer is full.
  request.read(0);
  const socket = request.socket;
  socket.destroySoon = () => {
    socket.pause();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

/**
 * Whether some of the request's body is left unread: it has not all arrived (a refused 100 MB
 * upload), or a reader took part of it and stopped (the multipart reader at a refused part). Node
 * drains only a body nobody read; the rest of one read in part stays in the request's buffer and,
 * once that is full, the socket stops reading, so the connection's next request would never be read.
 */
function bodyLeftUnread(request: IncomingMessage): boolean {
  return !request.complete || (request.readableDidRead && !request.readableEnded);
}

/** Sends `problem` as the reply, closing the connection instead of draining a body left unread. */
export function sendProblem(problem: Problem, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.problemCode = problem.code;
  // A body left unread is not drained: the connection closes instead.
  if (bodyLeftUnread(request.raw)) {
    reply.header("connection", "close");
    closeWithoutDraining(request.raw);
  }
  return reply
    .code(problem.statusCode)
    .headers(problem.headers)
    .type("application/problem+json")
    .send(problemDocument(problem, request.url.split("?")[0]!, String(request.id)));
}
