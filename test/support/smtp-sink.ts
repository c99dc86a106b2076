import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll } from "vitest";

export interface SmtpSink {
  port: number;
  /** Every message received, parsed, with its envelope. */
  messages: { from: string; to: string[]; mail: ParsedMail }[];
}

/** A real SMTP server on 127.0.0.1 (port 0) keeping what it receives; closed after the file's tests. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const sink: SmtpSink = { port: 0, messages: [] };
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          sink.messages.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            mail,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  sink.port = (server.server.address() as AddressInfo).port;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return sink;
}
