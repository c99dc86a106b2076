import { createServer, type Server } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { createServiceClients, remoteTransport } from "../../src/api/clients.ts";
import { exitOf, startMain, waitForOutput } from "../support/main-process.ts";
import { cleanups, createPipe, eventually, launchOnOwnDatabase, OPERATOR_TOKEN, type Service, startService, submit } from "./support.ts";

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

/** An OTLP/HTTP receiver (JSON encoding) on loopback: keeps every span it is sent. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; server: Server }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      if (request.url === "/v1/traces" && request.headers["content-type"]?.startsWith("application/json")) {
        const payload = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: ReceivedSpan[] }[] }[] };
        for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans, server };
}

describe("OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT set)", { timeout: 90_000 }, () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let service: Service;

  beforeAll(async () => {
    const teardown = cleanups();
    receiver = await startOtlpReceiver();
    // Closed after the service has stopped (cleanups run newest first), so its last spans find it.
    teardown.add(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
    service = await startService(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
      teardown.add,
    );
    return teardown.run;
  });

  it("one trace follows a submission: the edge request, CreateRun, and the worker's run and callback; its id is the X-Request-Id", async () => {
    const hook = createServer((request, response) => request.resume().on("end", () => response.writeHead(204).end()));
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => hook.close(() => resolve())));
    // The receiver's tokens in the callback URL's path and query: spans leave the process, so they must not be in them.
    const hookOrigin = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
    const pipe = await createPipe(service.clients, [`${hookOrigin}/hook/receiver-path-secret?token=receiver-secret`]);
    await createClient(SigningSecretService, remoteTransport(service.internalUrl, OPERATOR_TOKEN)).rotateSigningSecret({ organizationId: pipe.organizationId });
    // A client's own traceparent is not continued: it would choose the trace id, which is the request id.
    const clientTraceId = "0af7651916cd43dd8448eb211c80319c";
    const response = await submit(service.edgeUrl, pipe, undefined, undefined, { traceparent: `00-${clientTraceId}-b7ad6b7169203331-01` });
    expect(response.status).toBe(202);
    const requestId = response.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    expect(requestId).not.toBe(clientTraceId);

    const trace = await eventually(async () => {
      const spans = receiver.spans.filter((span) => span.traceId === requestId);
      return spans.some((span) => span.name === "run") && spans.some((span) => span.name === "step callback") ? spans : undefined;
    }, "the run's spans");
    const names = trace.map((span) => span.name);
    const SERVER = 2;
    // The edge: the HTTP server span of the request (no parent in this trace: it starts it).
    const edge = trace.find((span) => span.kind === SERVER && span.name === "POST /pipes/:pipeId/trigger");
    expect(edge, names.join(", ")).toBeDefined();
    expect(edge!.parentSpanId ?? "").toBe("");
    // Its Connect calls, with their traceparent carried to the services' side.
    expect(names).toContain("docpipe.v1.TriggerService/AuthenticateKey");
    // In one process the services' side makes the span; the caller only sends its traceparent.
    const createRun = trace.filter((span) => span.name === "docpipe.v1.TriggerService/CreateRun");
    expect(createRun.map((span) => span.kind)).toEqual([SERVER]);
    // The SQL, through the pg instrumentation.
    expect(
      trace.some((span) => /^(pg\.query|SELECT|INSERT|WITH)/i.test(span.name)),
      names.join(", "),
    ).toBe(true);
    // The worker's run, a child of CreateRun's server span through the run row, and its steps.
    const run = trace.find((span) => span.name === "run")!;
    expect(run.parentSpanId).toBe(createRun[0]!.spanId);
    expect(trace.find((span) => span.name === "step parse")!.parentSpanId).toBe(run.spanId);
    // The callback step queues the delivery; the delivery queue's attempt joins the same trace, and
    // within it the signed request to the receiver (an HTTP client span).
    expect(trace.find((span) => span.name === "step callback")!.parentSpanId).toBe(run.spanId);
    const attempt = await eventually(
      async () => receiver.spans.find((span) => span.traceId === requestId && span.name === "callback delivery"),
      "the delivery's span",
    );
    const delivery = await eventually(
      async () => receiver.spans.find((span) => span.kind === 3 && span.name === "POST" && span.parentSpanId === attempt.spanId),
      "the callback request's span",
    );
    expect(delivery!.attributes?.find((attribute) => attribute.key === "url.full")?.value.stringValue).toBe(`${hookOrigin}/REDACTED`);
    expect(JSON.stringify(trace)).not.toContain("receiver-secret");
    expect(JSON.stringify(trace)).not.toContain("receiver-path-secret");

    // An unrelated request starts a trace of its own.
    const other = await fetch(`${service.edgeUrl}/healthz`);
    expect(other.headers.get("x-request-id")).toMatch(/^[0-9a-f]{32}$/);
    expect(other.headers.get("x-request-id")).not.toBe(requestId);
  });

  it("a problem document's traceId is the trace id, and the request's log lines carry it", async () => {
    const pipe = await createPipe(service.clients);
    const response = await submit(service.edgeUrl, pipe, "%PDF-1.7\n1 0 obj\n<<>>\nendobj\n", "document.pdf");
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { code: string; traceId: string };
    expect(problem.code).toBe("unsupported_format");
    expect(problem.traceId).toBe(response.headers.get("x-request-id"));
    await eventually(async () => (receiver.spans.some((span) => span.traceId === problem.traceId) ? true : undefined), "the refused request's trace");
    // The process writes its log asynchronously: the line may come after the span was exported.
    const lines = await eventually(async () => {
      const found = service.main.output.stdout.split("\n").filter((line) => line.includes(`"traceId":"${problem.traceId}"`));
      return found.length > 0 ? found : undefined;
    }, "the request's log lines with its traceId");
    expect(lines.length).toBeGreaterThan(0);
  });

  it("a request the router refuses before any hook (a malformed percent-escape) still has its trace", async () => {
    const response = await fetch(`${service.edgeUrl}/pipes/%zz/trigger`, { method: "POST" });
    expect(response.status).toBe(400);
    const traceId = response.headers.get("x-request-id")!;
    const span = await eventually(async () => receiver.spans.find((span) => span.traceId === traceId), "the refused request's span");
    expect(span.name).toBe("POST unmatched");
  });
});

describe("OpenTelemetry traces across processes: an edge calling the services at SERVICES_URL", { timeout: 90_000 }, () => {
  it("the edge's client span and the services' server span of CreateRun are one trace, parent and child", async () => {
    const receiver = await startOtlpReceiver();
    onTestFinished(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100" };
    const services = await launchOnOwnDatabase(
      { ...otel, DOCPIPE_ROLES: "services", TRIGGER_TOKEN: "trigger-token", INTERNAL_TOKEN: "internal-token" },
      onTestFinished,
    );
    const [, internalPort] = await waitForOutput(services, /"port":(\d+)[^\n]*"msg":"internal Connect services listening"/);
    const dataDir = await mkdtemp(join(tmpdir(), "docpipe-obs-edge-"));
    const edge = startMain({
      ...otel,
      DOCPIPE_ROLES: "edge",
      SERVICES_URL: `http://127.0.0.1:${internalPort}`,
      TRIGGER_TOKEN: "trigger-token",
      DATA_DIR: dataDir,
    });
    onTestFinished(async () => {
      edge.child.kill("SIGTERM");
      await exitOf(edge.child);
      await rm(dataDir, { recursive: true, force: true });
    });
    const [, edgePort] = await waitForOutput(edge, /Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
    const clients = createServiceClients(remoteTransport(`http://127.0.0.1:${internalPort}`, "internal-token"));

    const response = await submit(`http://127.0.0.1:${edgePort}`, await createPipe(clients));
    expect(response.status).toBe(202);
    const traceId = response.headers.get("x-request-id")!;
    const spans = await eventually(async () => {
      const createRun = receiver.spans.filter((span) => span.traceId === traceId && span.name === "docpipe.v1.TriggerService/CreateRun");
      return createRun.length === 2 ? createRun : undefined;
    }, "CreateRun's client and server spans");
    const client = spans.find((span) => span.kind === 3)!;
    const server = spans.find((span) => span.kind === 2)!;
    expect(server.parentSpanId).toBe(client.spanId);
  });
});
