import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { eml } from "../formats/fixtures.ts";

/** A multipart message with `parts`, each a header block and a body. */
function message(parts: { headers: string[]; body: string }[], subject = "Documents"): Uint8Array {
  const lines = [
    "From: ap@supplier.example",
    "To: in@acme.example",
    `Subject: ${subject}`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b"',
    "",
  ];
  for (const part of parts) lines.push("--b", ...part.headers, "", part.body);
  lines.push("--b--", "");
  return new TextEncoder().encode(lines.join("\r\n"));
}

const attachment = (name: string, type: string, bytes: string) => ({
  headers: [`Content-Type: ${type}; name="${name}"`, `Content-Disposition: attachment; filename="${name}"`, "Content-Transfer-Encoding: base64"],
  body: Buffer.from(bytes).toString("base64"),
});

describe("email (eml)", () => {
  it("gives the subject as a Title, the senders and date as text, the body, then each attachment under a Title with its own elements", async () => {
    const output = await parseDocument("eml", eml());
    expect(output.elements).toEqual([
      { type: "Title", text: "Invoice INV-7", level: 1 },
      { type: "UncategorizedText", text: 'From: "Ana" <ana@supplier.example>' },
      { type: "UncategorizedText", text: "To: ap@acme.example" },
      { type: "UncategorizedText", text: "Date: 2026-11-03T09:30:00.000Z" },
      { type: "NarrativeText", text: "Hello, the invoice is attached." },
      { type: "Title", text: "Attachment: lines.csv", level: 2 },
      expect.objectContaining({
        type: "Table",
        table: expect.objectContaining({
          rows: [
            ["item", "amount"],
            ["Bolts", "40"],
          ],
        }),
      }),
    ]);
    expect(output.email).toEqual({ subject: "Invoice INV-7", from: '"Ana" <ana@supplier.example>', to: "ap@acme.example", date: "2026-11-03T09:30:00.000Z" });
    expect(output.attachments).toEqual([{ name: "lines.csv", format: "csv", size: 21, parsed: true }]);
    expect(output.text).toBe("Invoice INV-7\n\nHello, the invoice is attached.\n\nAttachment: lines.csv\n\nitem,amount\nBolts,40\n");
    expect(output.markdown).toContain("## Attachment: lines.csv\n\n| item | amount |");
  });

  it("a Date header no date reader understands gives no date, not the time the message was read", async () => {
    const lines = ["From: ap@supplier.example", "Date: sometime last week", "Subject: Late", "", "Hello", ""];
    const output = await parseDocument("eml", new TextEncoder().encode(lines.join("\r\n")));
    expect(output.email).toEqual({ subject: "Late", from: "ap@supplier.example", to: "", date: null });
    expect(output.elements!.map((element) => element.text)).toEqual(["Late", "From: ap@supplier.example", "Hello"]);
    const folded = ["Date: Tue, 3 Nov 2026", " 09:30:00 +0000", "Subject: Folded", "", "Hello", ""];
    expect((await parseDocument("eml", new TextEncoder().encode(folded.join("\r\n")))).email!.date).toBe("2026-11-03T09:30:00.000Z");
  });

  it("an HTML body gives its structure", async () => {
    const output = await parseDocument(
      "eml",
      message([{ headers: ["Content-Type: text/html; charset=utf-8"], body: "<h2>Order 12</h2><ul><li>Bolts</li><li>Nuts</li></ul>" }]),
    );
    expect(output.elements!.slice(3)).toEqual([
      { type: "Title", text: "Order 12", level: 2 },
      { type: "ListItem", text: "Bolts" },
      { type: "ListItem", text: "Nuts" },
    ]);
  });

  it("an attached message is listed, not opened, and an attachment of no format we read is listed with format null", async () => {
    const output = await parseDocument(
      "eml",
      message([
        { headers: ["Content-Type: text/plain"], body: "See attached." },
        attachment("forwarded.eml", "message/rfc822", "Subject: inner\r\n\r\nInner body\r\n"),
        attachment("tool.exe", "application/octet-stream", "MZ\u0000\u0001binary"),
      ]),
    );
    expect(output.attachments).toEqual([
      { name: "forwarded.eml", format: "eml", size: expect.any(Number), parsed: false },
      { name: "tool.exe", format: null, size: expect.any(Number), parsed: false },
    ]);
    expect(output.text).not.toContain("Inner body");
  });

  it("parses at most 20 attachments; the rest are listed", async () => {
    const many = Array.from({ length: 25 }, (_, index) => attachment(`note-${index}.txt`, "text/plain", `note ${index}`));
    const output = await parseDocument("eml", message(many));
    expect(output.attachments).toHaveLength(25);
    expect(output.attachments!.filter((each) => each.parsed)).toHaveLength(20);
    expect(output.text).toContain("note 19");
    expect(output.text).not.toContain("note 20");
  });
});
