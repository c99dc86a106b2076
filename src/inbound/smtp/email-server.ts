import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { type AttachmentStream, type MailParser as MailParserType, MailParser } from "mailparser";
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from "smtp-server";
import type { ResolveEmailTriggerResponse } from "../../../gen/docpipe/v1/trigger_service_pb.js";
import type { ServiceClients } from "../../api/clients.ts";
import type { Config } from "../../platform/config.ts";
import { isValidFileName } from "../../documents/formats/file-names.ts";
import { acceptStaged, type ReceivedFile, stageStream } from "../http/upload.ts";
import { Problem } from "../http/problems.ts";
import { WindowCounterStore } from "../http/rate-limit-store.ts";
import type { Logger } from "../../platform/logger.ts";
import { type DocumentStore, FileTooLargeError } from "../../data/storage/document-store.ts";
import { errorInfoOf } from "../../platform/error-info.ts";
import { type ConnectionLimits, LimitedSmtpServer } from "./connection-limits.ts";
import { isSenderAllowed } from "./senders.ts";

export interface EmailServerOptions {
  clients: Pick<ServiceClients, "trigger">;
  store: DocumentStore;
  log: Logger;
  /** Mail to <pipe id>@domain is received; any other domain is refused (no relaying). */
  domain: string;
  host: string;
  port: number;
  /** The operator's largest max_size_mb (MAX_SIZE_MB_LIMIT): bounds every message before its pipe is known. */
  maxSizeMbLimit: number;
  /** Connections overall and per address, session lifetime, idle time and commands per connection. */
  connections: ConnectionLimits;
  /** Attachments one message may carry (EMAIL_MAX_ATTACHMENTS); past it the message gets 552 and makes no run. */
  maxAttachments: number;
}

/** The limits of EmailServerOptions as the EMAIL_* settings give them. */
export function emailLimitsOf(
  config: Pick<
    Config,
    | "emailMaxConnections"
    | "emailMaxConnectionsPerAddress"
    | "emailSessionMaxSeconds"
    | "emailIdleSeconds"
    | "emailMaxCommandsPerConnection"
    | "emailMaxAttachments"
  >,
): Pick<EmailServerOptions, "connections" | "maxAttachments"> {
  return {
    connections: {
      maxConnections: config.emailMaxConnections,
      maxConnectionsPerAddress: config.emailMaxConnectionsPerAddress,
      sessionMaxMs: config.emailSessionMaxSeconds * 1000,
      idleMs: config.emailIdleSeconds * 1000,
      maxCommandsPerConnection: config.emailMaxCommandsPerConnection,
    },
    maxAttachments: config.emailMaxAttachments,
  };
}

export interface EmailServer {
  port: number;
  close(): Promise<void>;
}

const BYTES_PER_MB = 1024 * 1024;
const HOUR_MS = 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;
const DEFAULT_MESSAGES_PER_HOUR = 100;
const DEFAULT_MESSAGES_PER_SENDER_PER_HOUR = 20;

/**
 * A message may be this much larger than the pipe's attachment limit: attachments travel base64
 * (4/3 of their size, with line breaks) beside the text, headers and other parts.
 */
function maxMessageBytes(maxSizeMb: number): number {
  return Math.ceil(maxSizeMb * BYTES_PER_MB * 1.4) + BYTES_PER_MB;
}

/** Recipients one message may try, accepted or refused: each is a pipe lookup. */
const MAX_RECIPIENTS_TRIED = 20;
/**
 * Recipients without a pipe one connection may name, over all its messages, before it is closed
 * (421): a new transaction (RSET) starts MAX_RECIPIENTS_TRIED again, so a client guessing pipe ids
 * could otherwise make lookups without end. As Postfix's hard error limit, 20 by default.
 */
const MAX_UNKNOWN_RECIPIENTS = 20;

/** SMTP's longest reply line, its code and CRLF included (RFC 5321, 4.5.3.1.5). */
const MAX_REPLY_OCTETS = 512;

/**
 * The 250 reply's text: the runs' ids while the line stays within MAX_REPLY_OCTETS, then how many
 * more there are. A client that cannot read a longer line would take the message as not accepted
 * and send it again. A message taken before is "already accepted", with the runs it made then.
 */
function acceptedReply(runIds: readonly string[], replayed: boolean): string {
  const room = MAX_REPLY_OCTETS - "250 ".length - "\r\n".length;
  let text = `${replayed ? "already " : ""}accepted as ${runIds.length} run(s):`;
  for (const [index, id] of runIds.entries()) {
    const after = runIds.length - index - 1;
    const more = after > 0 ? ` and ${after} more`.length : 0;
    if (text.length + 1 + id.length + more > room) return `${text} and ${after + 1} more`;
    text += ` ${id}`;
  }
  return text;
}

/**
 * An attachment's file name as an upload's would be: its folders dropped, as the multipart parser
 * drops them ("../reports/q3.pdf" is "q3.pdf"); `attachment-<n>` when none is left, or when it holds
 * what no file name may or is longer than an upload's may be.
 */
function attachmentName(filename: string | undefined, index: number): string {
  const base = filename?.slice(Math.max(filename.lastIndexOf("/"), filename.lastIndexOf("\\")) + 1) ?? "";
  return isValidFileName(base) ? base : `attachment-${index}`;
}

/** An SMTP refusal: the client sees the code and text; 4xx tells it to retry later, 5xx not to. */
function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

/** The pipe a session's message goes to, fixed by its first accepted recipient. */
interface Target {
  sender: string;
  resolved: ResolveEmailTriggerResponse;
}

/**
 * The SMTP server of email triggers: mail to <pipe id>@<domain> from a sender the pipe's email
 * trigger allows becomes one run per attachment of an accepted format. Every refusal is given
 * during the dialogue, with its code: at RCPT TO an unknown, paused or triggerless pipe (550 5.1.1),
 * a sender not allowed (550 5.7.1), a declared size over the pipe's limit (552 5.3.4), too many
 * messages (450 4.7.1); after DATA an attachment over the limit (552 5.3.4), no attachment of an
 * accepted format (550 5.6.1), and anything that cannot be stored now (451 4.3.0): a message is
 * only accepted (250) once its documents are stored and its runs recorded.
 */
export async function startEmailServer(options: EmailServerOptions): Promise<EmailServer> {
  const { clients, store, log, domain } = options;
  const targets = new WeakMap<SMTPServerSession, Target>();
  /** Recipients tried (accepted or not) in a session's transaction. */
  const recipientsTried = new WeakMap<SMTPServerSession, number>();
  /** Recipients without a pipe named on a connection (smtp-server keeps one session object per connection). */
  const unknownRecipients = new WeakMap<SMTPServerSession, number>();
  const perPipe = new WindowCounterStore();
  const perSender = new WindowCounterStore();
  /** Runs per organization and minute, against its plan's limit, as the edge counts each submission against its key's. */
  const perOrganization = new WindowCounterStore();
  const senderKey = (pipeId: string, sender: string) => `${pipeId}/${sender}`;

  /**
   * The refusal of one more message from `sender` to the pipe this hour, when one of its limits is
   * reached, or of its `runs` this minute when they would take the organization past its plan.
   */
  function overLimit(resolved: ResolveEmailTriggerResponse, sender: string, runs = 1): Error | undefined {
    const trigger = resolved.trigger!;
    const planLimit = resolved.rateLimitPerMinute;
    if (planLimit > 0 && perOrganization.current(resolved.organizationId) + runs > planLimit) {
      return smtpError(450, `4.7.1 this organization's plan allows ${planLimit} runs a minute (one per attachment); retry later`);
    }
    const pipeLimit = trigger.maxMessagesPerHour ?? DEFAULT_MESSAGES_PER_HOUR;
    const senderLimit = trigger.maxMessagesPerSenderPerHour ?? DEFAULT_MESSAGES_PER_SENDER_PER_HOUR;
    if (pipeLimit > 0 && perPipe.current(resolved.pipeId) >= pipeLimit) {
      return smtpError(450, `4.7.1 this pipe accepts ${pipeLimit} messages an hour; retry later`);
    }
    if (senderLimit > 0 && perSender.current(senderKey(resolved.pipeId, sender)) >= senderLimit) {
      return smtpError(450, `4.7.1 this pipe accepts ${senderLimit} messages an hour from one sender; retry later`);
    }
    return undefined;
  }

  /**
   * Counts a message that is about to be recorded, checking its limits again in the same step:
   * messages on other connections may have reached them since its RCPT TO was accepted.
   */
  function takeMessage(target: Target, runs: number): { refusal: Error } | { giveBack: () => void } {
    const refusal = overLimit(target.resolved, target.sender, runs);
    if (refusal !== undefined) return { refusal };
    const { organizationId, pipeId } = target.resolved;
    const pipe = perPipe.take(pipeId, HOUR_MS);
    const sender = perSender.take(senderKey(pipeId, target.sender), HOUR_MS);
    const organization = perOrganization.take(organizationId, MINUTE_MS, runs);
    // A counted message that was not recorded after all does not count (in the window it was counted in).
    return {
      giveBack: () => {
        perPipe.decr(pipeId, pipe);
        perSender.decr(senderKey(pipeId, target.sender), sender);
        perOrganization.decr(organizationId, organization, runs);
      },
    };
  }

  async function resolvePipe(localPart: string): Promise<ResolveEmailTriggerResponse | undefined> {
    try {
      return await clients.trigger.resolveEmailTrigger({ pipeId: localPart });
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
      throw error;
    }
  }

  async function checkRecipient(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    // Each recipient costs a lookup; a message goes to one pipe, so a client that tries many is guessing.
    const tried = (recipientsTried.get(session) ?? 0) + 1;
    recipientsTried.set(session, tried);
    if (tried > MAX_RECIPIENTS_TRIED) throw smtpError(452, `4.5.3 too many recipients tried for one message (at most ${MAX_RECIPIENTS_TRIED})`);
    const at = address.address.lastIndexOf("@");
    const recipientDomain = address.address.slice(at + 1).toLowerCase();
    if (at < 1 || recipientDomain !== domain) throw smtpError(550, `5.1.2 this server receives mail for ${domain} only`);
    let resolved: ResolveEmailTriggerResponse | undefined;
    try {
      resolved = await resolvePipe(address.address.slice(0, at).toLowerCase());
    } catch (error) {
      log.warn({ err: error }, "email trigger: the pipe could not be looked up");
      throw smtpError(451, "4.3.0 the pipe cannot be looked up now; retry later");
    }
    if (resolved === undefined) {
      const unknown = (unknownRecipients.get(session) ?? 0) + 1;
      unknownRecipients.set(session, unknown);
      if (unknown > MAX_UNKNOWN_RECIPIENTS) throw smtpError(421, "4.7.0 too many recipients without a pipe on one connection; closing");
      throw smtpError(550, `5.1.1 ${address.address}: no active pipe with an email trigger has this address`);
    }
    const trigger = resolved.trigger!;
    const sender = session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address.toLowerCase();
    if (!isSenderAllowed(trigger.allowedSenders, sender)) throw smtpError(550, `5.7.1 ${sender || "<>"} may not send to this pipe`);
    const args = session.envelope.mailFrom === false ? false : session.envelope.mailFrom.args;
    const declared = Number((args === false ? undefined : args.SIZE) ?? 0);
    if (declared > maxMessageBytes(trigger.maxSizeMb)) {
      throw smtpError(552, `5.3.4 the message is larger than this pipe accepts (${maxMessageBytes(trigger.maxSizeMb)} bytes)`);
    }
    const refusal = overLimit(resolved, sender);
    if (refusal !== undefined) throw refusal;
    const current = targets.get(session);
    if (current !== undefined && current.resolved.pipeId !== resolved.pipeId) throw smtpError(452, "4.5.3 one pipe per message; send to the others apart");
    targets.set(session, { sender, resolved });
  }

  /** Reads the message as a stream, staging each attachment within the pipe's limits; then stores and records them. */
  async function receive(stream: SMTPServerDataStream, target: Target): Promise<string> {
    const trigger = target.resolved.trigger!;
    const maxBytes = trigger.maxSizeMb * BYTES_PER_MB;
    const messageLimit = maxMessageBytes(trigger.maxSizeMb);
    const accepted: ReceivedFile[] = [];
    let tooLarge = false;
    /** More attachments than EMAIL_MAX_ATTACHMENTS: the rest are read past, unstaged. */
    let tooMany = false;
    let storageFailed = false;
    let unreadable = false;
    /** The client went away before the message's end. */
    let gone = false;
    let attachments = 0;
    let subject = "";
    let messageId = "";
    const parser = messageParser();
    parser.on("headers", (headers) => {
      const value = headers.get("subject");
      subject = typeof value === "string" ? value.slice(0, 998) : "";
      const id = headers.get("message-id");
      messageId = typeof id === "string" ? id.replace(/^<|>$/g, "").slice(0, 998) : "";
    });
    const pending: Promise<void>[] = [];
    /** Attachments being staged: a parser that fails stops feeding them, and they are ended here. */
    const open = new Set<AttachmentStream>();
    parser.on("data", (part: { type: string } & Partial<AttachmentStream>) => {
      if (part.type !== "attachment") return;
      const attachment = part as AttachmentStream;
      open.add(attachment);
      attachments++;
      if (attachments > options.maxAttachments) tooMany = true;
      const name = attachmentName(attachment.filename, attachments);
      pending.push(
        (async () => {
          try {
            if (tooLarge || tooMany || storageFailed || unreadable) return;
            const staged = await stageStream(store, attachment.content, name, attachment.contentType, maxBytes);
            accepted.push(await acceptStaged(store, staged, trigger.acceptedFormats));
          } catch (error) {
            if (error instanceof FileTooLargeError) tooLarge = true;
            else if (unreadable || gone)
              return; // its stream was ended because the message cannot be read, or its client went away
            else if (!(error instanceof Problem)) {
              storageFailed = true;
              log.warn({ err: error }, "email trigger: an attachment could not be staged");
            }
          } finally {
            open.delete(attachment);
            attachment.content.resume();
            attachment.release?.();
          }
        })(),
      );
    });
    const parsed = new Promise<void>((resolve) => {
      parser.on("end", resolve);
      parser.on("error", (error: Error) => {
        unreadable = true;
        log.info({ err: error.message }, "email trigger: a message could not be parsed");
        // An attachment handed out before the error would wait for bytes that never come, and the
        // message, paused for a parser that will not drain now, would never reach its end.
        for (const attachment of open) attachment.content.destroy(error);
        stream.resume();
        resolve();
      });
    });
    // Read to its end whatever happens: SMTP answers a message only after its last byte. A client
    // that goes away first (or stalls past smtp-server's socket timeout) ends it without its end.
    let size = 0;
    let overLimit = false;
    await new Promise<void>((resolve) => {
      stream.on("error", () => {}); // the connection's error, also logged by the server; "close" follows
      stream.on("close", () => {
        gone = !stream.readableEnded;
        resolve();
      });
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > messageLimit) overLimit = true;
        if (overLimit || unreadable) return;
        if (!parser.write(chunk)) {
          stream.pause();
          parser.once("drain", () => stream.resume());
        }
      });
      stream.on("end", resolve);
    });
    const discardAll = () => Promise.all(accepted.map((file) => store.discard(file.staged).catch(() => {})));
    if (gone) {
      // Nothing of it is kept: the attachments being staged stop (and remove what they wrote).
      const error = new Error("the client went away before the message ended");
      for (const attachment of open) attachment.content.destroy(error);
      parser.destroy();
      await Promise.all(pending);
      await discardAll();
      throw smtpError(421, "4.4.2 the connection closed before the message ended");
    }
    parser.end();
    await parsed;
    await Promise.all(pending);

    if (overLimit || tooLarge) {
      await discardAll();
      throw smtpError(552, `5.3.4 the message or an attachment is larger than this pipe accepts (${trigger.maxSizeMb} MB per attachment)`);
    }
    if (tooMany) {
      await discardAll();
      throw smtpError(552, `5.3.4 the message has more than ${options.maxAttachments} attachments; send them in several messages`);
    }
    if (unreadable) {
      await discardAll();
      throw smtpError(550, "5.6.0 the message is not well-formed MIME");
    }
    if (storageFailed) {
      await discardAll();
      throw smtpError(451, "4.3.0 the attachments cannot be stored now; retry later");
    }
    if (accepted.length === 0) throw smtpError(550, `5.6.1 no attachment of an accepted format (${trigger.acceptedFormats.join(", ")})`);
    const taken = takeMessage(target, accepted.length);
    if ("refusal" in taken) {
      await discardAll();
      throw taken.refusal;
    }
    try {
      const { runIds, replayed } = await recordRuns(target, accepted, { subject, messageId });
      // A message sent again is not one more message for the limits.
      if (replayed) taken.giveBack();
      return acceptedReply(runIds, replayed);
    } catch (error) {
      taken.giveBack();
      throw error;
    }
  }

  /**
   * Stores the accepted attachments and records their runs in one call, all or none: a failure
   * asks for a retry of the whole message, and leaves no run for the retry to make twice. Documents
   * stored before a failure have no run; the orphan sweeper removes them.
   */
  async function recordRuns(
    target: Target,
    files: ReceivedFile[],
    message: { subject: string; messageId: string },
  ): Promise<{ runIds: string[]; replayed: boolean }> {
    const { organizationId, pipeId, pipelineVersion } = target.resolved;
    let committed = 0;
    try {
      for (const file of files) {
        await store.commit(organizationId, file.staged);
        committed++;
      }
      const { runs, replayed } = await clients.trigger.createRuns({
        organizationId,
        pipeId,
        pipelineVersion,
        files: files.map((file) => ({
          name: file.name,
          contentType: file.contentType,
          format: file.format,
          size: BigInt(file.staged.size),
          sha256: file.staged.sha256,
        })),
        email: { sender: target.sender, subject: message.subject, messageId: message.messageId },
      });
      if (replayed)
        log.info({ pipeId, messageId: message.messageId, runs: runs.length }, "email trigger: a message taken before was sent again; answered with its runs");
      return { runIds: runs.map((run) => run.id), replayed };
    } catch (error) {
      await Promise.all(files.slice(committed).map((rest) => store.discard(rest.staged).catch(() => {})));
      if (error instanceof ConnectError && errorInfoOf(error)?.reason === "too_many_queued_runs") {
        throw smtpError(452, "4.3.1 this organization has as many runs queued as it may hold; retry later");
      }
      log.warn({ err: error, documentsStored: committed }, "email trigger: the documents could not be stored or their runs recorded");
      throw smtpError(451, "4.3.0 the documents cannot be stored now; retry later");
    }
  }

  const server = new LimitedSmtpServer(
    {
      name: domain,
      banner: "docpipe email trigger",
      // Anyone may deliver (like any MX); who may submit is each pipe's allowed_senders.
      authOptional: true,
      disabledCommands: ["AUTH", "STARTTLS"],
      size: maxMessageBytes(options.maxSizeMbLimit),
      logger: false,
      // The client's host name is not used; a flood of connections makes no DNS queries.
      disableReverseLookup: true,
      // A new transaction (after RSET, or a second message on the connection): its recipients are its own.
      onMailFrom(_address, session, callback) {
        targets.delete(session);
        recipientsTried.delete(session);
        callback();
      },
      onRcptTo(address, session, callback) {
        checkRecipient(address, session).then(
          () => callback(),
          (error: Error) => callback(error),
        );
      },
      onData(stream, session, callback) {
        const target = targets.get(session);
        targets.delete(session);
        if (target === undefined) {
          stream.resume();
          stream.on("end", () => callback(smtpError(503, "5.5.1 no valid recipient")));
          return;
        }
        receive(stream, target).then(
          (message) => callback(null, message),
          (error: Error) => callback("responseCode" in error ? error : smtpError(451, "4.3.0 the message cannot be taken now; retry later")),
        );
      },
    },
    options.connections,
  );
  server.on("error", (error) => log.warn({ err: error.message }, "email trigger: SMTP connection error"));
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A parser for one message as the trigger reads it: only the headers and the attachments are used,
 * so the bodies are not converted (HTML to text, text to HTML with its links), which held the event
 * loop for a megabyte of either.
 */
export function messageParser(): MailParserType {
  return new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
}
