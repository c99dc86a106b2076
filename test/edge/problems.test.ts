import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { pino } from "pino";
import Fastify from "fastify";
import { describe, expect, it, onTestFinished } from "vitest";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { sendProblem } from "../../src/inbound/http/problem-replies.ts";
import { PROBLEMS, Problem, problemFromConnectError } from "../../src/inbound/http/problems.ts";
import { serviceError } from "../../src/api/errors.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { parseResponses, sendRaw } from "../support/raw-http.ts";

/** A pino destination that keeps each JSON line, parsed. */
function logLines(): { lines: Record<string, unknown>[]; sink: Writable } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, sink };
}

describe("Connect code -> HTTP status and problem code", () => {
  it.each([
    [Code.InvalidArgument, 400],
    [Code.FailedPrecondition, 400],
    [Code.OutOfRange, 400],
    [Code.Unauthenticated, 401],
    [Code.PermissionDenied, 403],
    [Code.NotFound, 404],
    [Code.AlreadyExists, 409],
    [Code.Aborted, 409],
    [Code.ResourceExhausted, 429],
    [Code.Unavailable, 503],
    [Code.DeadlineExceeded, 504],
    [Code.Internal, 500],
    [Code.Unknown, 500],
    [Code.DataLoss, 500],
    [Code.Unimplemented, 500],
    [Code.Canceled, 500],
  ])("%s -> %i", (code, status) => {
    expect(problemFromConnectError(new ConnectError("x", code)).statusCode).toBe(status);
  });

  it("uses a known reason as the problem code when its status agrees with the Connect code", () => {
    expect(problemFromConnectError(serviceError(Code.NotFound, "pipe_not_found", "gone")).code).toBe("pipe_not_found");
    expect(problemFromConnectError(serviceError(Code.NotFound, "api_key_missing", "mismatch")).code).toBe("not_found");
    expect(problemFromConnectError(serviceError(Code.NotFound, "unknown_reason", "x")).code).toBe("not_found");
  });

  it("never passes on the message of an internal error", () => {
    const problem = problemFromConnectError(new ConnectError('relation "secret_table" does not exist', Code.Internal));
    expect(problem.message).not.toContain("secret_table");
  });

  it("gives every problem a title and a 4xx or 5xx status", () => {
    for (const { status, title } of Object.values(PROBLEMS)) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(title.length).toBeGreaterThan(0);
    }
  });
});

describe("unexpected failures are problem documents too", () => {
  async function appWhoseKeyServiceFails(error: Error) {
    const failing = {
      authenticateKey: async () => {
        throw error;
      },
    };
    const clients = { trigger: failing, keys: {}, pipes: {}, runs: {}, workspaces: {} } as unknown as ServiceClients;
    return buildApp({ clients, store: new FileStore("/nonexistent"), log: pino({ level: "silent" }), ready: async () => {} });
  }

  it("a bug -> 500 internal_error without internals", async () => {
    const app = await appWhoseKeyServiceFails(new Error("password=hunter2 at db.ts:42"));
    const response = await app.inject({ method: "POST", url: "/pipes/x/trigger", headers: { "x-api-key": "k" } });
    expect(response.statusCode).toBe(500);
    expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ status: 500, code: "internal_error", title: "Internal error", instance: "/pipes/x/trigger" });
    expect(response.body).not.toMatch(/hunter2|db\.ts/);
  });

  it("every 500 logs its cause with the request id, also over the in-process transport", async () => {
    const { lines, sink } = logLines();
    const clients = createServiceClients(
      createDirectTransport((router) => {
        router.service(TriggerService, {
          authenticateKey: async () => {
            throw new Error("disk on fire in key lookup");
          },
        });
      }),
    );
    const app = await buildApp({ clients, store: new FileStore("/nonexistent"), log: pino({ level: "error" }, sink), ready: async () => {} });
    const response = await app.inject({ method: "POST", url: "/pipes/x/trigger", headers: { "x-api-key": "k", "x-request-id": "req-500-cause" } });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ code: "internal_error", traceId: "req-500-cause" });
    expect(response.body).not.toContain("disk on fire");
    const logged = lines.filter((line) => line.reqId === "req-500-cause" && line.msg === "request failed");
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0])).toContain("disk on fire in key lookup");
  });

  it("an answer Node's parser forced (431, 417) is logged with the id the client was given", async () => {
    const { lines, sink } = logLines();
    const app = await buildApp({
      clients: {} as ServiceClients,
      store: new FileStore("/nonexistent"),
      log: pino({ level: "info" }, sink),
      ready: async () => {},
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    try {
      for (const [request, status, code] of [
        [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`, 431, "headers_too_large"],
        ["GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\n\r\n", 417, "expectation_failed"],
      ] as const) {
        const [answer] = parseResponses(await sendRaw(url, Buffer.from(request, "latin1")));
        const body = JSON.parse(answer!.body.toString("utf8")) as { traceId: string; code: string };
        expect(body.code).toBe(code);
        const logged = lines.filter((line) => line.reqId === body.traceId);
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({ level: 30, msg: "request refused before it reached a route", code, statusCode: status, remoteAddress: "127.0.0.1" });
      }
    } finally {
      await app.close();
    }
  });

  it("the database down -> 503 service_unavailable", async () => {
    const app = await appWhoseKeyServiceFails(serviceError(Code.Unavailable, "service_unavailable", "the database is unavailable; retry shortly"));
    const response = await app.inject({ method: "POST", url: "/pipes/x/trigger", headers: { "x-api-key": "k" } });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ status: 503, code: "service_unavailable" });
  });

  it("readyz is 503 service_unavailable when the database does not answer", async () => {
    const app = await buildApp({
      clients: {} as ServiceClients,
      store: new FileStore("/nonexistent"),
      log: pino({ level: "silent" }),
      ready: async () => {
        throw new Error("ECONNREFUSED");
      },
    });
    const response = await app.inject({ method: "GET", url: "/readyz" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: "service_unavailable" });
    expect((await app.inject({ method: "GET", url: "/healthz" })).json()).toEqual({ status: "ok" });
  });
});

describe("messages that are not our services' own stay out of problem details", () => {
  it("a transport error's message is replaced by the problem's title", () => {
    const problem = problemFromConnectError(new ConnectError("connect ECONNREFUSED 10.0.0.7:8081", Code.Unavailable));
    expect(problem.code).toBe("service_unavailable");
    expect(problem.message).toBe(PROBLEMS.service_unavailable.title);
  });

  it("a service's own message is kept", () => {
    expect(problemFromConnectError(serviceError(Code.NotFound, "pipe_not_found", "pipe not found or not active")).message).toBe("pipe not found or not active");
  });
});

describe("a refusal's connection, by how much of the body was read", () => {
  /** A route that reads none, the first chunk or all of a 100 KB body, waits for the rest to arrive, then refuses it. */
  async function refusingApp() {
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
    app.post<{ Params: { read: string } }>("/:read", async (request, reply) => {
      const raw = request.raw;
      if (request.params.read === "part") {
        await new Promise<void>((resolve) =>
          raw.once("data", () => {
            raw.pause();
            resolve();
          }),
        );
      }
      if (request.params.read === "all") for await (const _ of raw);
      while (!raw.complete) await new Promise((resolve) => setTimeout(resolve, 5));
      return sendProblem(new Problem("bad_request", "refused"), request, reply);
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    onTestFinished(() => app.close());
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  /** POSTs 100 KB at once and returns the answer's status and Connection header. */
  function post(url: string): Promise<{ status: number; connection: string | undefined }> {
    return new Promise((resolve, reject) => {
      const sent = request(url, { method: "POST", headers: { "content-type": "application/octet-stream" }, agent: new Agent({ keepAlive: true }) });
      sent.on("response", (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode!, connection: response.headers.connection }));
      });
      sent.on("error", reject);
      sent.end(Buffer.alloc(100_000, "x"));
    });
  }

  it.each([
    ["read in part and left: closed (the rest would stop the socket once the request's buffer is full)", "part", "close"],
    ["read to its end: kept open", "all", "keep-alive"],
    ["not read at all: kept open (Node drains it)", "none", "keep-alive"],
  ])("a body that has all arrived, %s", async (_, read, connection) => {
    const url = await refusingApp();
    expect(await post(`${url}/${read}`)).toEqual({ status: 400, connection });
  });
});
