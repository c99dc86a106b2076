import { create } from "@bufbuild/protobuf";
import { once } from "node:events";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { createTransport } from "nodemailer";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { describe, expect, it } from "vitest";
import { EmailNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { createMailer, type EmailContext, runEmail, SMTP_TIMEOUTS } from "../../src/runs/nodes/email/email.ts";
import { startSmtpSink } from "../support/smtp-sink.ts";
import { textLayerPdf } from "./invoices.ts";
import { nodeContext, stepErrorOf } from "./support.ts";

const RUN_DATA = { extract: { fields: { number: "INV-9", total: { amount: 99.5, currency: "EUR" } } }, customer: { email: "ap@customer.example" } };
const PDF = textLayerPdf(["Invoice number: INV-9"]);

describe("email", async () => {
  const sink = await startSmtpSink();
  const logged: { object: object; message: string }[] = [];
  const context = (overrides: Partial<EmailContext> = {}): EmailContext => ({
    ...nodeContext(),
    mailer: createTransport(`smtp://127.0.0.1:${sink.port}`),
    from: "docpipe@docpipe.example",
    readDocument: async () => PDF,
    log: { warn: (object, message) => void logged.push({ object, message }) },
    ...overrides,
  });

  /** An SMTP server on 127.0.0.1 with these options, for one test. */
  async function smtpServer(options: SMTPServerOptions): Promise<{ port: number; close: () => void }> {
    const server = new SMTPServer({ disabledCommands: ["STARTTLS"], logger: false, ...options });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.server.address() as AddressInfo).port, close: () => server.close() };
  }

  it("sends to a real SMTP server: recipients, subject and body by JSONata, the document and the data attached", async () => {
    const node = create(EmailNodeSchema, {
      to: '[customer.email, "books@docpipe.example"]',
      subject: '"Invoice " & extract.fields.number',
      body: '"Total: " & $string(extract.fields.total.amount) & " " & extract.fields.total.currency',
      attachDocument: true,
      attachData: true,
    });
    const output = await runEmail(node, RUN_DATA, context());
    expect(output).toEqual({
      messageId: expect.any(String),
      to: ["ap@customer.example", "books@docpipe.example"],
      subject: "Invoice INV-9",
      attachments: ["invoice.pdf", "data.json"],
    });
    expect(sink.messages).toHaveLength(1);
    const { from, to, mail } = sink.messages[0]!;
    expect(from).toBe("docpipe@docpipe.example");
    expect(to).toEqual(["ap@customer.example", "books@docpipe.example"]);
    expect(mail.subject).toBe("Invoice INV-9");
    expect(mail.text?.trim()).toBe("Total: 99.5 EUR");
    expect(mail.messageId).toBe((output as { messageId: string }).messageId);
    expect(mail.attachments.map((attachment) => [attachment.filename, attachment.contentType])).toEqual([
      ["invoice.pdf", "application/pdf"],
      ["data.json", "application/json"],
    ]);
    expect(mail.attachments[0]!.content.equals(PDF)).toBe(true);
    expect(JSON.parse(mail.attachments[1]!.content.toString("utf8"))).toEqual(RUN_DATA);
  });

  it("records the message instead of sending it in test mode", async () => {
    const before = sink.messages.length;
    const node = create(EmailNodeSchema, { to: "customer.email", subject: '"Hi\\r\\nBcc: x@evil.example"', attachData: true });
    expect(await runEmail(node, RUN_DATA, context({ testMode: true }))).toEqual({
      testMode: true,
      email: { to: ["ap@customer.example"], subject: "Hi Bcc: x@evil.example", body: JSON.stringify(RUN_DATA, null, 2), attachments: ["data.json"] },
    });
    expect(sink.messages.length).toBe(before);
  });

  it("refuses recipients that are not addresses with email_invalid", async () => {
    for (const to of ['"not an address"', "nothing.here", '"a@b.example>, c@d.example"']) {
      const error = await stepErrorOf(() => runEmail(create(EmailNodeSchema, { to, subject: '"x"' }), RUN_DATA, context()));
      expect(error.code, to).toBe("email_invalid");
      expect(error.details).toEqual({ field: "email.to" });
    }
  });

  it("refuses with email_invalid an address nodemailer would read as a group, a comment or another address, and sends nothing", async () => {
    const before = sink.messages.length;
    const tries = [
      "accounts.good.example:attacker@evil.example",
      "a\u0000b@good.example",
      "a(x@evil.example)@good.example",
      "a@[evil.example]",
      "good@good.example\\",
      "x@good.example\u0085Bcc:evil@evil.example",
    ];
    for (const address of tries) {
      const error = await stepErrorOf(() => runEmail(create(EmailNodeSchema, { to: "to", subject: '"x"' }), { to: address }, context()));
      expect(error.message, address).toBe(`email_invalid: email.to: ${JSON.stringify(address)} is not an email address`);
      expect(error.details).toEqual({ field: "email.to" });
    }
    expect(sink.messages.length).toBe(before);
    // A plain address with the characters an address may have is still sent.
    await runEmail(create(EmailNodeSchema, { to: "to", subject: '"x"' }), { to: "o'brien+invoices@sub.good.example" }, context());
    expect(sink.messages.at(-1)!.to).toEqual(["o'brien+invoices@sub.good.example"]);
  });

  it("fails with email_failed when no SMTP server is configured or it refuses", async () => {
    const node = create(EmailNodeSchema, { to: "customer.email", subject: '"x"' });
    expect((await stepErrorOf(() => runEmail(node, RUN_DATA, context({ mailer: undefined })))).message).toBe(
      "email_failed: this server sends no email: the operator has not set SMTP_URL",
    );
    const closed = createTransport({ host: "127.0.0.1", port: 1, connectionTimeout: 2000 });
    expect((await stepErrorOf(() => runEmail(node, RUN_DATA, context({ mailer: closed })))).message).toBe("email_failed: could not connect to the SMTP server");
  });

  it("tells the tenant what failed, with the SMTP reply code, never the operator's server, address or its words; the log has them", async () => {
    const node = create(EmailNodeSchema, { to: "customer.email", subject: '"x"' });
    logged.length = 0;
    const closed = createTransport("smtp://mailuser:Sup3rSecret@127.0.0.1:1");
    const refused = await stepErrorOf(() => runEmail(node, RUN_DATA, context({ mailer: closed })));
    expect(refused.message).toBe("email_failed: could not connect to the SMTP server");
    expect(logged).toEqual([
      {
        object: { err: expect.objectContaining({ code: "ESOCKET", message: "connect ECONNREFUSED 127.0.0.1:1" }) },
        message: "an email node's message was not sent",
      },
    ]);

    const login = await smtpServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth: (_auth, _session, callback) => callback(new Error("Invalid login for mailuser at relay-7.operator.internal")),
    });
    const recipient = await smtpServer({
      disabledCommands: ["STARTTLS", "AUTH"],
      onRcptTo: (_address, _session, callback) => callback(Object.assign(new Error("5.1.1 unknown user at relay-7.operator.internal"), { responseCode: 550 })),
    });
    try {
      const badLogin = createTransport(`smtp://mailuser:Sup3rSecret@127.0.0.1:${login.port}`);
      expect((await stepErrorOf(() => runEmail(node, RUN_DATA, context({ mailer: badLogin })))).message).toBe(
        "email_failed: the SMTP server refused the operator's credentials (SMTP 535)",
      );
      const rcpt = createTransport(`smtp://127.0.0.1:${recipient.port}`);
      expect((await stepErrorOf(() => runEmail(node, RUN_DATA, context({ mailer: rcpt })))).message).toBe(
        "email_failed: the SMTP server refused the sender or the recipients (SMTP 550)",
      );
    } finally {
      login.close();
      recipient.close();
    }
    expect(logged.map(({ object }) => (object as { err: { message: string } }).err.message)).toEqual([
      expect.stringContaining("127.0.0.1:1"),
      expect.stringContaining("relay-7.operator.internal"),
      expect.stringContaining("relay-7.operator.internal"),
    ]);
  });

  it("closes the connection and ends the step when the run is aborted: a server that never greets does not hold it", async () => {
    const connections: Socket[] = [];
    const silent = createServer((socket) => connections.push(socket));
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    try {
      const controller = new AbortController();
      const mailer = createMailer(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      const node = create(EmailNodeSchema, { to: "customer.email", subject: '"x"' });
      const started = Date.now();
      const sending = runEmail(node, RUN_DATA, context({ mailer, signal: controller.signal }));
      await expect.poll(() => connections.length).toBe(1);
      controller.abort();
      await expect(sending).rejects.toMatchObject({ name: "AbortError" });
      expect(Date.now() - started).toBeLessThan(2000);
      await expect.poll(() => connections[0]!.closed).toBe(true);
    } finally {
      silent.close();
    }
  });

  it("makes the transport with time limits far under nodemailer's defaults, which SMTP_URL's query may override", () => {
    const options = (mailer: ReturnType<typeof createMailer>) => (mailer.transporter as unknown as { options: Record<string, unknown> }).options;
    expect(SMTP_TIMEOUTS).toEqual({ connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
    expect(options(createMailer("smtp://mail.example:587"))).toMatchObject({ host: "mail.example", port: 587, ...SMTP_TIMEOUTS });
    expect(options(createMailer("smtp://mail.example:587?socketTimeout=60000"))).toMatchObject({ socketTimeout: 60_000 });
  });
});
