import { type ParsedMail, simpleParser } from "mailparser";
import { detectBufferedFormat } from "../formats/detect.ts";
import type { Element } from "./elements/element.ts";
import { htmlElements } from "./elements/html.ts";
import { plainTextElements } from "./elements/plain-text.ts";
import { appendAll } from "../../platform/arrays.ts";

/** Attachments parsed at most per message; the others are listed only. */
const MAX_PARSED_ATTACHMENTS = 20;

/** An attachment of a message: its name, the format detected from its bytes (null: none we read), its size, and whether it was parsed. */
export interface EmailAttachment {
  name: string;
  format: string | null;
  size: number;
  parsed: boolean;
}

/** What an attachment's parse gives the message: its text and elements (the caller's parseDocument, one level deep). */
export type ParseAttachment = (format: string, bytes: Uint8Array) => Promise<{ text?: string; elements?: Element[] }>;

export interface ReadEmail {
  text: string;
  elements: Element[];
  email: { subject: string; from: string; to: string; date: string | null };
  attachments: EmailAttachment[];
}

/**
 * The Date header's time, or null when the message has none or one no date reader understands
 * (mailparser gives the time of parsing for those, which would date the message today).
 */
function sentDate(mail: ParsedMail): string | null {
  const header = mail.headerLines.find((line) => line.key === "date");
  if (mail.date === undefined || header === undefined) return null;
  const written = header.line
    .slice(header.line.indexOf(":") + 1)
    .replace(/\r?\n/g, "")
    .trim();
  return Number.isNaN(new Date(written).getTime()) ? null : mail.date.toISOString();
}

/**
 * A message (RFC 5322, MIME) read by `mailparser`: its headers as elements (the subject as a Title;
 * From, To and Date as UncategorizedText), its body (the HTML part's structure when it has one, else
 * the text part's), then each attachment of a format we read, parsed by `parseAttachment` under a
 * Title naming it. An attached message is listed, not opened: one level, whatever a sender nests.
 */
export async function readEmail(bytes: Uint8Array, parseAttachment: ParseAttachment): Promise<ReadEmail> {
  // The text part is read only when there is no HTML part: the HTML is not converted to text. (Text
  // parts are still converted to HTML: in a mixed message, mailparser puts them in `html` that way.)
  const mail = await simpleParser(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    skipHtmlToText: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  const addresses = (value: typeof mail.from | typeof mail.to) => (Array.isArray(value) ? value.map((each) => each.text).join(", ") : (value?.text ?? ""));
  const email = { subject: mail.subject ?? "", from: addresses(mail.from), to: addresses(mail.to), date: sentDate(mail) };
  const elements: Element[] = [];
  if (email.subject !== "") elements.push({ type: "Title", text: email.subject, level: 1 });
  for (const [label, value] of [
    ["From", email.from],
    ["To", email.to],
    ["Date", email.date ?? ""],
  ] as const) {
    if (value !== "") elements.push({ type: "UncategorizedText", text: `${label}: ${value}` });
  }
  const body = typeof mail.html === "string" ? htmlElements(mail.html) : plainTextElements(mail.text ?? "");
  appendAll(elements, body);
  const texts = [[email.subject, ...body.map((element) => element.text)].filter((text) => text !== "").join("\n\n")];
  const attachments: EmailAttachment[] = [];
  for (const attachment of mail.attachments) {
    const name = attachment.filename ?? "attachment";
    const content = new Uint8Array(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength);
    const format = (await detectBufferedFormat(content, name, attachment.contentType)) ?? null;
    const parse = format !== null && format !== "eml" && attachments.filter((each) => each.parsed).length < MAX_PARSED_ATTACHMENTS;
    attachments.push({ name, format, size: attachment.size, parsed: parse });
    if (!parse) continue;
    const output = await parseAttachment(format, content);
    elements.push({ type: "Title", text: `Attachment: ${name}`, level: 2 });
    appendAll(elements, output.elements ?? []);
    if (output.text !== undefined && output.text !== "") texts.push(`Attachment: ${name}\n\n${output.text}`);
  }
  return { text: texts.join("\n\n"), elements, email, attachments };
}
