import { createTransport, type Transporter } from "nodemailer";
import addressparser from "nodemailer/lib/addressparser";
import type { EmailNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { evaluateExpression } from "../../sandbox/expressions.ts";
import type { SandboxCaller } from "../../sandbox/pool.ts";
import type { NodeContext, RunData } from "../run-data.ts";
import { StepError } from "../../step-error.ts";

/** What an email node needs beside the run: the operator's SMTP transport and sender, and the run's document. */
export interface EmailContext extends NodeContext {
  /** Made from SMTP_URL; undefined when the operator has not set one. */
  mailer: Pick<Transporter, "sendMail"> | undefined;
  /** The From address of every message. */
  from: string;
  /** The run's document bytes, for attach_document. */
  readDocument: () => Promise<Buffer>;
  /** The operator's log: a failure's full error goes there, the tenant's step shows generic text. */
  log: { warn(object: object, message: string): void };
}

/** What a sent message's step shows. */
export interface EmailOutput {
  messageId: string;
  to: string[];
  subject: string;
  attachments: string[];
}

/** What a node in test mode records instead of sending. */
export interface RecordedEmail {
  testMode: true;
  email: { to: string[]; subject: string; body: string; attachments: string[] };
}

/**
 * A pragmatic address check (one @; no spaces, angle brackets, commas or quotes): SMTP refuses the
 * rest itself, this keeps header injection out. Nor the characters that make an address field more
 * than one plain mailbox to nodemailer: `:` starts a group (`name:attacker@evil.example` goes to the
 * attacker), `(` `)` a comment, `[` `]` a domain literal, `\` an escape; nor a control character
 * (nodemailer drops a NUL, so `a\u0000b@x` would go to `ab@x`).
 */
const ADDRESS = /^[^\s@<>,;":()[\]\\\p{Cc}]+@[^\s@<>,;":()[\]\\\p{Cc}]+$/u;
const MAX_RECIPIENTS = 50;

/**
 * The SMTP connection's time limits (ms), far under nodemailer's defaults (2 minutes to connect, 30 s
 * for the greeting, 10 minutes of silence): a run waits on the node, and an HTTP request node or a
 * callback has 30 s by default. Connecting (the name's lookup included) and the greeting have 10 s
 * each, and the server may then be silent 30 s at most between two replies. SMTP_URL's query
 * (`?socketTimeout=60000`) overrides them.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** The email nodes' transport for SMTP_URL, within SMTP_TIMEOUTS. */
export function createMailer(smtpUrl: string): Transporter {
  return createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
}

/**
 * What the tenant's step says of each nodemailer error code. nodemailer's own messages name the
 * operator's SMTP server (`connect ECONNREFUSED 10.0.0.5:587`, a certificate's names, the server's
 * reply to a login), which is the operator's and not the tenant's to know; they go to the log.
 */
const SMTP_FAILURES: Record<string, string> = {
  ECONNECTION: "could not connect to the SMTP server",
  ESOCKET: "could not connect to the SMTP server",
  EDNS: "could not connect to the SMTP server",
  EPROXY: "could not connect to the SMTP server",
  ETLS: "could not set up TLS with the SMTP server",
  ETIMEDOUT: "the SMTP server did not answer in time",
  EAUTH: "the SMTP server refused the operator's credentials",
  ENOAUTH: "the SMTP server refused the operator's credentials",
  EOAUTH2: "the SMTP server refused the operator's credentials",
  EPROTOCOL: "the SMTP server's answer was not understood",
  EENVELOPE: "the SMTP server refused the sender or the recipients",
  EMESSAGE: "the SMTP server refused the message",
};

/** The tenant's text for a failed send: by nodemailer's code, with the SMTP reply code of a refusal (`550`), never the server's own words. */
function sendFailure(error: unknown): string {
  const { code, responseCode } = error as { code?: unknown; responseCode?: unknown };
  const text = (typeof code === "string" ? SMTP_FAILURES[code] : undefined) ?? "the message could not be sent";
  return typeof responseCode === "number" ? `${text} (SMTP ${responseCode})` : text;
}

async function text(source: string, field: string, runData: RunData, caller: SandboxCaller): Promise<string> {
  const value = await evaluateExpression(source, field, runData, caller);
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/**
 * Whether nodemailer sends to exactly this string: it passes ADDRESS, and nodemailer's own parser
 * reads it as one plain mailbox equal to it (no group, comment or name), so the envelope goes to
 * the address the step reports and nowhere else.
 */
function isPlainAddress(value: unknown): value is string {
  if (typeof value !== "string" || !ADDRESS.test(value)) return false;
  const parsed = addressparser(value);
  return parsed.length === 1 && parsed[0]!.group === undefined && parsed[0]!.name === "" && parsed[0]!.address === value;
}

async function recipients(node: EmailNode, runData: RunData, path: string, caller: SandboxCaller): Promise<string[]> {
  const value = await evaluateExpression(node.to, `${path}.to`, runData, caller);
  const list = (Array.isArray(value) ? value : [value]).filter((entry) => entry !== undefined && entry !== null && entry !== "");
  const field = `${path}.to`;
  if (list.length === 0) throw new StepError("email_invalid", `${field}: the expression gives no recipient`, { field });
  if (list.length > MAX_RECIPIENTS) throw new StepError("email_invalid", `${field}: at most ${MAX_RECIPIENTS} recipients`, { field });
  for (const address of list) {
    if (!isPlainAddress(address)) {
      throw new StepError("email_invalid", `${field}: ${JSON.stringify(address).slice(0, 100)} is not an email address`, { field });
    }
  }
  return list as string[];
}

/**
 * Sends the run's result by SMTP: recipients, subject and body from JSONata over the run data (the
 * body is the run data as indented JSON when the node has none), the document and/or the data
 * attached. In test mode the message is recorded and not sent.
 */
export async function runEmail(node: EmailNode, runData: RunData, context: EmailContext, path = "email"): Promise<EmailOutput | RecordedEmail> {
  const to = await recipients(node, runData, path, context);
  // One line: a line break in a subject would start a header of its own.
  const subject = (await text(node.subject, `${path}.subject`, runData, context)).replace(/[\r\n]+/g, " ").slice(0, 998);
  const body = node.body === "" ? JSON.stringify(runData, null, 2) : await text(node.body, `${path}.body`, runData, context);
  const attachmentNames = [...(node.attachDocument ? [context.document.name] : []), ...(node.attachData ? ["data.json"] : [])];
  if (context.testMode) return { testMode: true, email: { to, subject, body, attachments: attachmentNames } };
  if (context.mailer === undefined) throw new StepError("email_failed", "this server sends no email: the operator has not set SMTP_URL");
  const attachments = [
    ...(node.attachDocument
      ? [{ filename: context.document.name, content: await context.readDocument(), contentType: context.document.contentType || undefined }]
      : []),
    ...(node.attachData ? [{ filename: "data.json", content: JSON.stringify(runData, null, 2), contentType: "application/json" }] : []),
  ];
  try {
    // The run's signal closes the connection: a server that never answers would hold the step until a timeout.
    const info = await context.mailer.sendMail({ from: context.from, to, subject, text: body, attachments, signal: context.signal });
    return { messageId: String(info.messageId), to, subject, attachments: attachmentNames };
  } catch (error) {
    if (context.signal.aborted) throw error;
    context.log.warn({ err: error }, "an email node's message was not sent");
    throw new StepError("email_failed", sendFailure(error));
  }
}
