/**
 * The pipe editor's test document route (`POST /test-runs/<organization>/<pipe>`) under a flood: one
 * organization sending many test documents at once holds at most TEST_UPLOADS_PER_ORGANIZATION
 * uploads, the rest refused at once with 429 `too_many_test_runs` and Retry-After, while another
 * organization's test document is taken meanwhile.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { AuditService } from "../../gen/docpipe/v1/audit_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { createServices, type Services, serviceRoutes } from "../../src/api/routes.ts";
import { inProcessAccess } from "../../src/inbound/rpc/interceptors.ts";
import { TEST_UPLOADS_PER_ORGANIZATION } from "../../src/api/test-runs.ts";
import { testRunsHandler } from "../../src/inbound/rpc/test-runs.ts";
import { textLayerPdf } from "../nodes/invoices.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { tempStore } from "../worker/fixtures.ts";
import { pino } from "pino";

const TOKEN = "test-runs-operator";
const PDF = textLayerPdf(["Invoice number: INV-7"]);

describe("the test document route under a flood", () => {
  let services: Services;
  let clients: ServiceClients;
  let audit: Client<typeof AuditService>;
  let server: Server;
  let baseUrl: string;
  /** Turns taken so far, and who waits for a number of them. */
  let turns = 0;
  const turnWaiters: Array<{ count: number; resolve: () => void }> = [];
  const turnsTaken = (count: number) => new Promise<void>((resolve) => (turns >= count ? resolve() : turnWaiters.push({ count, resolve })));

  beforeAll(async () => {
    const temp = await tempStore();
    services = createServices(testDeps(await testDatabase(), { INTERNAL_TOKEN: TOKEN }));
    const transport = createDirectTransport(serviceRoutes(services, inProcessAccess(pino({ level: "silent" }))));
    clients = createServiceClients(transport);
    audit = createClient(AuditService, transport);
    server = createServer(
      testRunsHandler(
        {
          ...services.testRuns,
          // Counts the turns the route gives, so the test sends its flood only once the held uploads hold theirs.
          begin(target) {
            const release = services.testRuns.begin(target);
            turns++;
            for (const waiter of turnWaiters.filter((waiter) => turns >= waiter.count)) waiter.resolve();
            return release;
          },
        },
        () => temp.store,
        // Every request of this test is a test document: nothing falls through.
        () => {},
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return temp.remove;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** An organization with a pipe in test mode whose trigger (an HTTP one unless told) takes PDFs up to 1 MB. */
  async function pipeInTestMode(name: string, trigger: "httpTrigger" | "emailTrigger" = "httpTrigger"): Promise<string> {
    const { organization } = await clients.workspaces.createOrganization({ name });
    const organizationId = organization!.id;
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "in", kind: { case: trigger, value: { acceptedFormats: ["pdf"], maxSizeMb: 1 } } },
        { id: "parse", kind: { case: "parse", value: {} } },
      ],
    });
    const { pipe } = await clients.pipes.createPipe({ organizationId, name, pipeline });
    await clients.pipes.updatePipe({ organizationId, pipeId: pipe!.id, testMode: true });
    return `${baseUrl}/test-runs/${organizationId}/${pipe!.id}`;
  }

  /** A test document whose bytes arrive only once `arrive` is called: its upload holds its turn until then. */
  function heldUpload(url: string) {
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(PDF.subarray(0, 100));
        await arrived;
        controller.enqueue(PDF.subarray(100));
        controller.close();
      },
    });
    const response = fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/pdf", "x-file-name": "held.pdf" },
      body,
      duplex: "half",
    } as RequestInit);
    return { response, arrive };
  }

  const send = (url: string) =>
    fetch(url, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/pdf", "x-file-name": "note.pdf" }, body: PDF });

  it("holds one organization to its uploads at once, refusing the rest with 429 too_many_test_runs, while another's is taken", async () => {
    const flooder = await pipeInTestMode("flooder");
    const other = await pipeInTestMode("other");
    const held = Array.from({ length: TEST_UPLOADS_PER_ORGANIZATION }, () => heldUpload(flooder));
    await turnsTaken(TEST_UPLOADS_PER_ORGANIZATION);
    const refused = await send(flooder);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { reason: string }).reason).toBe("too_many_test_runs");
    const flood = await Promise.all(Array.from({ length: 20 }, () => send(flooder)));
    expect(flood.map((response) => response.status)).toEqual(Array(20).fill(429));

    const served = await send(other);
    expect(served.status).toBe(201);
    const { runId } = (await served.json()) as { runId: string };
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    // The test run is in the organization's audit log, under who sent it.
    const organizationId = new URL(other).pathname.split("/")[2]!;
    const { events } = await audit.listAuditEvents({ organizationId, resourceId: runId });
    expect(events.map(({ action, resourceType, actorKind, address }) => ({ action, resourceType, actorKind, address }))).toEqual([
      { action: "test_run", resourceType: "run", actorKind: "operator", address: "127.0.0.1" },
    ]);

    for (const upload of held) upload.arrive();
    expect((await Promise.all(held.map((upload) => upload.response))).map((response) => response.status)).toEqual(
      Array(TEST_UPLOADS_PER_ORGANIZATION).fill(201),
    );
    // Their turns are free again.
    expect((await send(flooder)).status).toBe(201);
  });

  it("refuses an X-File-Name longer than 255 bytes in UTF-8, as the edge refuses such a file name: 400 file_name_invalid", async () => {
    const url = await pipeInTestMode("long file name");
    const refused = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/pdf", "x-file-name": `${"n".repeat(252)}.pdf` },
      body: PDF,
    });
    expect({ status: refused.status, body: await refused.json() }).toMatchObject({ status: 400, body: { reason: "file_name_invalid" } });
    const taken = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/pdf", "x-file-name": `${"n".repeat(251)}.pdf` },
      body: PDF,
    });
    expect(taken.status).toBe(201);
  });

  it("judges a test document by the pipe's trigger, HTTP or email: a format it does not list and a file past its size are refused", async () => {
    for (const trigger of ["httpTrigger", "emailTrigger"] as const) {
      const url = await pipeInTestMode(`judged by ${trigger}`, trigger);
      const png = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "image/png", "x-file-name": "scan.png" },
        body: Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex"),
      });
      expect({ status: png.status, body: await png.json() }).toMatchObject({ status: 400, body: { reason: "unsupported_format" } });
      const large = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/pdf", "x-file-name": "large.pdf" },
        body: Buffer.concat([PDF, Buffer.alloc(1024 * 1024)]),
      });
      expect(large.status).toBe(400);
      expect(await large.json()).toMatchObject({ reason: "file_too_large" });
      expect((await send(url)).status).toBe(201);
    }
  });
});
