import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { createTransport } from "nodemailer";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { loadConfig } from "../../src/platform/config.ts";
import { type EmailServer, emailLimitsOf, startEmailServer } from "../../src/inbound/smtp/email-server.ts";
import { PDF_INVOICE, textLayerPdf } from "../nodes/invoices.ts";
import { type EdgeHarness, startEdge, storedFiles } from "../support/edge.ts";
import { rawSmtpSession } from "../support/smtp-session.ts";
import { sleep, until } from "../support/wait.ts";

const DOMAIN = "in.docpipe.test";
const PDF = textLayerPdf(PDF_INVOICE);
/** Scaled down from the defaults so a flood is a few dozen connections. */
const LIMITS = {
  EMAIL_MAX_CONNECTIONS: "12",
  EMAIL_MAX_CONNECTIONS_PER_ADDRESS: "4",
  EMAIL_MAX_ATTACHMENTS: "5",
  EMAIL_MAX_COMMANDS_PER_CONNECTION: "10",
  MAX_QUEUED_RUNS_PER_ORGANIZATION: "12",
};

let edge: EdgeHarness;
const servers: EmailServer[] = [];

async function emailServer(env: Record<string, string> = {}): Promise<EmailServer> {
  const server = await startEmailServer({
    clients: edge.clients,
    store: edge.store,
    log: pino({ level: "silent" }),
    domain: DOMAIN,
    host: "127.0.0.1",
    port: 0,
    maxSizeMbLimit: 100,
    ...emailLimitsOf(loadConfig({ ...LIMITS, ...env })),
  });
  servers.push(server);
  return server;
}

let server: EmailServer;
beforeAll(async () => {
  edge = await startEdge({ MAX_QUEUED_RUNS_PER_ORGANIZATION: LIMITS.MAX_QUEUED_RUNS_PER_ORGANIZATION });
  server = await emailServer();
});
afterAll(async () => {
  for (const each of servers) await each.close();
  await edge.close();
});

async function emailPipe(plan = "advanced"): Promise<{ organizationId: string; pipeId: string; to: string }> {
  const { organization } = await edge.clients.workspaces.createOrganization({ name: "Email limits", plan });
  const organizationId = organization!.id;
  const { pipe } = await edge.clients.pipes.createPipe({
    organizationId,
    name: "invoices by email",
    pipeline: create(PipelineSchema, {
      nodes: [
        { id: "email", kind: { case: "emailTrigger", value: { allowedSenders: ["@supplier.example"], acceptedFormats: ["pdf"], maxSizeMb: 1 } } },
        { id: "parse", kind: { case: "parse", value: {} } },
      ],
    }),
  });
  await edge.clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  return { organizationId, pipeId: pipe!.id, to: `${pipe!.id}@${DOMAIN}` };
}

const pdfs = (count: number) => Array.from({ length: count }, (_, index) => ({ filename: `invoice-${index}.pdf`, content: PDF }));

/** Sends a message with `attachments`; its SMTP answer: 250 with the reply, or the refusal's code and text. */
async function send(port: number, to: string, attachments: { filename: string; content: Buffer }[]): Promise<{ code: number; response: string }> {
  const mailer = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, connectionTimeout: 10_000 });
  try {
    const info = await mailer.sendMail({
      from: "ap@supplier.example",
      to,
      subject: "Invoices",
      text: "Attached.",
      attachments,
      messageId: `<${randomUUID()}@supplier.example>`,
    });
    return { code: 250, response: info.response };
  } catch (error) {
    const { responseCode, response } = error as { responseCode: number; response: string };
    return { code: responseCode, response };
  }
}

async function runsOf(organizationId: string): Promise<number> {
  const row = await edge.deps.db
    .selectFrom("runs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("email trigger: connections", () => {
  it("answers one address's connection past EMAIL_MAX_CONNECTIONS_PER_ADDRESS with 421, while another sender's message is accepted", async () => {
    const flood = await Promise.all(Array.from({ length: 10 }, () => rawSmtpSession(server.port, "127.0.0.2")));
    const greetings = flood.map((session) => session.greeting.slice(0, 3));
    expect(greetings.filter((code) => code === "220")).toHaveLength(4);
    expect(greetings.filter((code) => code === "421")).toHaveLength(6);
    expect(flood.find((session) => session.greeting.startsWith("421"))!.greeting).toBe(
      "421 4.7.0 too many connections from your address (at most 4); try again later",
    );
    // Another tenant, from another address, is served meanwhile.
    const { organizationId, to } = await emailPipe();
    expect((await send(server.port, to, pdfs(1))).code).toBe(250);
    expect(await runsOf(organizationId)).toBe(1);
    for (const session of flood) session.close();
  });

  it("answers a connection past EMAIL_MAX_CONNECTIONS with 421, whatever its address; closed ones make room", async () => {
    const own = await emailServer();
    const held = await Promise.all(Array.from({ length: 12 }, (_, index) => rawSmtpSession(own.port, `127.0.1.${1 + (index % 4)}`)));
    expect(held.every((session) => session.greeting.startsWith("220"))).toBe(true);
    const refused = await rawSmtpSession(own.port, "127.0.2.1");
    expect(refused.greeting).toBe("421 4.7.0 too many connections now; try again later");
    await refused.closed;
    held[0]!.close();
    await held[0]!.closed;
    // The server counts the closed one out once it sees the close.
    let next = await rawSmtpSession(own.port, "127.0.2.1");
    for (let tries = 0; next.greeting.startsWith("421") && tries < 100; tries++) {
      await sleep(50);
      next = await rawSmtpSession(own.port, "127.0.2.1");
    }
    expect(next.greeting).toMatch(/^220/);
    next.close();
    for (const session of held) session.close();
  });

  it("closes a session that only sends NOOP (421) once EMAIL_IDLE_SECONDS pass: NOOP does not keep it open", async () => {
    const own = await emailServer({ EMAIL_IDLE_SECONDS: "1", EMAIL_MAX_COMMANDS_PER_CONNECTION: "100000" });
    const session = await rawSmtpSession(own.port, "127.0.3.1");
    let closed = false;
    void session.closed.then(() => (closed = true));
    // A NOOP every 100 ms: ten a second, far more often than the idle time.
    const noops = (async () => {
      while (!closed) {
        session.command("NOOP");
        await sleep(100);
      }
    })();
    await until(() => closed);
    await noops;
    expect(session.lines.at(-1)).toBe("421 4.4.2 no message moved on for too long; closing");
    expect(session.lines.filter((line) => line.startsWith("250")).length).toBeGreaterThan(0);
  });

  it("closes a session at EMAIL_SESSION_MAX_SECONDS (421), however busy it keeps", async () => {
    const own = await emailServer({ EMAIL_SESSION_MAX_SECONDS: "1", EMAIL_MAX_COMMANDS_PER_CONNECTION: "100000" });
    const session = await rawSmtpSession(own.port, "127.0.3.2");
    let closed = false;
    void session.closed.then(() => (closed = true));
    const busy = (async () => {
      while (!closed) {
        session.command("EHLO client.supplier.example");
        await sleep(50);
      }
    })();
    await until(() => closed);
    await busy;
    expect(session.lines.at(-1)).toBe("421 4.4.2 this session has lasted as long as one may; closing");
  });

  it("answers the command past EMAIL_MAX_COMMANDS_PER_CONNECTION with 421 and closes the connection", async () => {
    const session = await rawSmtpSession(server.port, "127.0.3.3");
    for (let index = 0; index < 10; index++) expect(await session.command("NOOP")).toMatch(/^250/);
    expect(await session.command("NOOP")).toBe("421 4.7.0 too many commands on one connection (at most 10); closing");
    await session.closed;
  });
});

describe("email trigger: runs a message makes", () => {
  it("refuses a message of more attachments than EMAIL_MAX_ATTACHMENTS with 552, making no run and keeping nothing", async () => {
    const { organizationId, to } = await emailPipe();
    const before = await storedFiles(edge.store);
    expect(await send(server.port, to, pdfs(6))).toEqual({
      code: 552,
      response: "552 5.3.4 the message has more than 5 attachments; send them in several messages",
    });
    expect(await runsOf(organizationId)).toBe(0);
    expect(await storedFiles(edge.store)).toEqual(before);
    expect((await send(server.port, to, pdfs(5))).code).toBe(250);
    expect(await runsOf(organizationId)).toBe(5);
  });

  it("counts every run a message makes against the organization's plan (runs a minute), as the edge counts submissions", async () => {
    const own = await emailServer({ EMAIL_MAX_ATTACHMENTS: "50" });
    // The free plan: 10 a minute.
    const { organizationId, to } = await emailPipe("free");
    expect((await send(own.port, to, pdfs(4))).code).toBe(250);
    expect(await send(own.port, to, pdfs(7))).toEqual({
      code: 450,
      response: "450 4.7.1 this organization's plan allows 10 runs a minute (one per attachment); retry later",
    });
    expect((await send(own.port, to, pdfs(6))).code).toBe(250);
    expect((await send(own.port, to, pdfs(1))).code).toBe(450);
    expect(await runsOf(organizationId)).toBe(10);
  });

  it("refuses a message whose runs would pass MAX_QUEUED_RUNS_PER_ORGANIZATION with 452, making none; another organization is served", async () => {
    const { organizationId, to } = await emailPipe();
    expect((await send(server.port, to, pdfs(5))).code).toBe(250);
    expect((await send(server.port, to, pdfs(5))).code).toBe(250);
    expect(await send(server.port, to, pdfs(3))).toEqual({
      code: 452,
      response: "452 4.3.1 this organization has as many runs queued as it may hold; retry later",
    });
    expect(await runsOf(organizationId)).toBe(10);
    const other = await emailPipe();
    expect((await send(server.port, other.to, pdfs(4))).code).toBe(250);
  });
});
