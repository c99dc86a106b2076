/**
 * The multipart reader (src/inbound/http/multipart.ts) on bodies given as chunks: parts and their
 * bytes whatever the chunking, delimiters split anywhere, limits, and bodies that break off.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { MultipartError, type MultipartLimits, type MultipartPart, multipartBoundary, readMultipart, requestChunks } from "../../src/inbound/http/multipart.ts";

const BOUNDARY = "----docpipe7MA4YWxk";
const LIMITS: MultipartLimits = { files: 2, fields: 20, parts: 32, headerPairs: 64 };

function body(...parts: { headers: string[]; bytes: string | Buffer }[]): Buffer {
  return Buffer.concat([
    Buffer.from("preamble, read past\r\n"),
    ...parts.flatMap(({ headers, bytes }) => [
      Buffer.from(`--${BOUNDARY}\r\n${headers.join("\r\n")}\r\n\r\n`, "latin1"),
      Buffer.from(bytes),
      Buffer.from("\r\n"),
    ]),
    Buffer.from(`--${BOUNDARY}--\r\nepilogue, never read`),
  ]);
}

/** `bytes` in chunks of `size`, as an iterator that records whether it was returned. */
function chunked(bytes: Buffer, size: number) {
  const state = { returned: false, pulled: 0 };
  async function* chunks() {
    try {
      for (let at = 0; at < bytes.length; at += size) {
        state.pulled++;
        yield bytes.subarray(at, at + size);
      }
    } finally {
      state.returned = true;
    }
  }
  return { iterator: chunks(), state };
}

/** Every part with its bytes read (a file's as text), in order. */
async function readAll(bytes: Buffer, size: number, limits = LIMITS) {
  const read: (Omit<MultipartPart, "file"> & { text?: string })[] = [];
  for await (const part of readMultipart(chunked(bytes, size).iterator, BOUNDARY, limits)) {
    if (part.type === "field") read.push(part);
    else {
      const { file, ...described } = part;
      const pieces: Buffer[] = [];
      for await (const piece of file) pieces.push(piece);
      read.push({ ...described, text: Buffer.concat(pieces).toString("latin1") });
    }
  }
  return read;
}

const FILE_BYTES = `%PDF-1.4\r\n--${BOUNDARY.slice(0, -1)} almost a delimiter\r\n-\r\n--\r\n${"x".repeat(300)}`;
const FORM = body(
  { headers: ['Content-Disposition: form-data; name="note"'], bytes: "a field's value" },
  { headers: ['Content-Disposition: form-data; name="file"; filename="reports/q3.pdf"', "Content-Type: Application/PDF; charset=binary"], bytes: FILE_BYTES },
);

describe("readMultipart", () => {
  it.each([1, 2, 3, 7, 64, 100_000])("reads the same parts and bytes in chunks of %i bytes", async (size) => {
    expect(await readAll(FORM, size)).toEqual([
      { type: "field", fieldname: "note" },
      { type: "file", fieldname: "file", filename: "q3.pdf", mimetype: "application/pdf", text: FILE_BYTES },
    ]);
  });

  it.each([16, 100_000])("reads the epilogue to the body's end without searching it, in chunks of %i bytes: a delimiter in it begins no part", async (size) => {
    const late = `\r\n--${BOUNDARY}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="late"; filename="late.pdf"\r\n\r\nzz\r\n--${BOUNDARY}--\r\n`;
    // Right after the closing delimiter, with no line break between.
    const closed = FORM.subarray(0, FORM.indexOf(`--${BOUNDARY}--`) + BOUNDARY.length + 4);
    const form = Buffer.concat([closed, Buffer.from(late), Buffer.alloc(5000)]);
    const source = chunked(form, size);
    const names = [];
    for await (const part of readMultipart(source.iterator, BOUNDARY, LIMITS)) {
      names.push(part.fieldname);
      if (part.type === "file") for await (const _ of part.file);
    }
    expect(names).toEqual(["note", "file"]);
    await vi.waitFor(() => expect(source.state.returned).toBe(true));
    expect(source.state.pulled).toBe(Math.ceil(form.length / size));
  });

  it("a refusal mid-form hands the body back unread", async () => {
    const source = chunked(FORM, 16);
    for await (const part of readMultipart(source.iterator, BOUNDARY, LIMITS)) if (part.type === "field") break;
    await vi.waitFor(() => expect(source.state.returned).toBe(true));
    expect(source.state.pulled).toBeLessThan(FORM.length / 16 / 2);
  });

  it("a body that starts with its first delimiter (no preamble) has its first part", async () => {
    const form = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n--${BOUNDARY}--`);
    expect(await readAll(form, 1)).toEqual([{ type: "file", fieldname: "file", filename: "a.txt", mimetype: "text/plain", text: "hi" }]);
  });

  it("a header block cut off by a delimiter is dropped, and the next part's header read afresh", async () => {
    const form = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="cut"; filename="cut.pdf"\r\n--${BOUNDARY}\r\n`
        + `Content-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n--${BOUNDARY}--`,
    );
    expect(await readAll(form, 7)).toEqual([{ type: "file", fieldname: "file", filename: "a.txt", mimetype: "text/plain", text: "hi" }]);
  });

  it("one dash after a delimiter belongs to the part (its header's first line is then no header: the part is skipped)", async () => {
    const form = Buffer.from(
      `--${BOUNDARY}-\r\nContent-Disposition: form-data; name="dashed"\r\n\r\nv\r\n`
        + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="plain"\r\n\r\nv\r\n--${BOUNDARY}--`,
    );
    expect(await readAll(form, 3)).toEqual([{ type: "field", fieldname: "plain" }]);
  });

  it("a file part left unread is read past: the next part still comes", async () => {
    const form = body(
      { headers: ['Content-Disposition: form-data; name="first"; filename="a.bin"'], bytes: Buffer.alloc(5000, 1) },
      { headers: ['Content-Disposition: form-data; name="second"'], bytes: "v" },
    );
    const names = [];
    for await (const part of readMultipart(chunked(form, 100).iterator, BOUNDARY, LIMITS)) names.push(part.fieldname);
    expect(names).toEqual(["first", "second"]);
  });

  it("reads names as busboy does: RFC 5987 decoded, folders dropped, no type is text/plain, a part without a file name is a field", async () => {
    const form = body(
      { headers: ["Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%F0%9F%93%84.pdf"], bytes: "1" },
      { headers: ['Content-Disposition: form-data; name="file"; filename="C:\\docs\\b.txt"'], bytes: "2" },
      { headers: ['Content-Disposition: form-data; name="file"', "Content-Type: application/octet-stream"], bytes: "3" },
      { headers: ['Content-Disposition: form-data; filename="nameless.pdf"', "Content-Type: application/pdf"], bytes: "4" },
    );
    expect(await readAll(form, 13, { ...LIMITS, files: 3 })).toEqual([
      { type: "file", fieldname: "file", filename: "résumé 📄.pdf", mimetype: "text/plain", text: "1" },
      { type: "file", fieldname: "file", filename: "b.txt", mimetype: "text/plain", text: "2" },
      { type: "field", fieldname: "file" },
      { type: "file", fieldname: undefined, filename: "nameless.pdf", mimetype: "application/pdf", text: "4" },
    ]);
  });

  it("skips parts busboy skips: no Content-Disposition, not form-data, a bare line break in a name", async () => {
    const form = body(
      { headers: ["Content-Type: text/plain"], bytes: "1" },
      { headers: ['Content-Disposition: attachment; name="file"; filename="a.pdf"'], bytes: "2" },
      { headers: ["Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''a%0Ab.pdf"], bytes: "3" },
      { headers: ['Content-Disposition: form-data; name="kept"'], bytes: "4" },
    );
    expect(await readAll(form, 5)).toEqual([{ type: "field", fieldname: "kept" }]);
  });

  it.each([
    ["parts", { ...LIMITS, parts: 2 }],
    ["fields", { ...LIMITS, fields: 2 }],
    ["files", { ...LIMITS, files: 2 }],
  ] as const)("past its limit of %s: a MultipartError naming the limit", async (limit, limits) => {
    const many = Array.from({ length: 3 }, (_, index) => ({
      headers: [`Content-Disposition: form-data; name="p${index}"${limit === "files" ? `; filename="${index}.pdf"` : ""}`],
      bytes: "v",
    }));
    const error = await readAll(body(...many), 16, limits).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MultipartError);
    expect(error).toMatchObject({ limit });
  });

  it("a body that breaks off inside a file part fails that part's bytes with a MultipartError", async () => {
    const cut = FORM.subarray(0, FORM.indexOf("almost"));
    const error = await readAll(cut, 50).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MultipartError);
    expect((error as Error).message).toBe("Unexpected end of multipart data");
  });

  it("an empty body is a form without parts", async () => {
    expect(await readAll(Buffer.alloc(0), 1)).toEqual([]);
  });

  it("a request that fails while read is a MultipartError with its cause", async () => {
    const reset = Object.assign(new Error("aborted"), { code: "ECONNRESET" });
    async function* failing() {
      yield FORM.subarray(0, 200);
      throw reset;
    }
    const parts = readMultipart(failing(), BOUNDARY, LIMITS);
    await expect(
      (async () => {
        for await (const part of parts) if (part.type === "file") for await (const _ of part.file);
      })(),
    ).rejects.toMatchObject({ name: "MultipartError", message: "the request was closed before its body ended", cause: reset });
  });
});

describe("multipartBoundary", () => {
  it.each([
    ["multipart/form-data; boundary=abc", "abc"],
    ['multipart/form-data; charset=utf-8; Boundary="a b;c"', "a b;c"],
    [`multipart/form-data; boundary=${"b".repeat(252)}`, "b".repeat(252)],
  ])("%s: %s", (contentType, boundary) => {
    expect(multipartBoundary(contentType)).toBe(boundary);
  });

  it.each(["multipart/form-data", "multipart/form-data; boundary=", `multipart/form-data; boundary=${"b".repeat(253)}`])(
    "%s: a MultipartError",
    (contentType) => {
      expect(() => multipartBoundary(contentType)).toThrow(MultipartError);
    },
  );
});

describe("requestChunks", () => {
  /** A request stand-in: a stream with `chunks` already written to it. */
  function requestWith(chunks: Buffer[]) {
    const stream = new PassThrough();
    for (const chunk of chunks) stream.write(chunk);
    return stream;
  }

  it("hands over the chunks as they arrived, never joined, and ends with the request", async () => {
    const chunks = [Buffer.from("one"), Buffer.from("two"), Buffer.from("three")];
    const stream = requestWith(chunks);
    stream.end();
    const read = [];
    for await (const chunk of requestChunks(stream as unknown as IncomingMessage)) read.push(chunk);
    expect(read.map(String)).toEqual(["one", "two", "three"]);
    expect(read[0]).toBe(chunks[0]);
  });

  it("pauses the request while four chunks wait, and when its reader stops", async () => {
    const stream = requestWith(Array.from({ length: 10 }, (_, index) => Buffer.from(String(index))));
    const reader = requestChunks(stream as unknown as IncomingMessage);
    expect(String((await reader.next()).value)).toBe("0");
    expect(stream.isPaused()).toBe(true);
    await reader.return(undefined);
    expect(stream.isPaused()).toBe(true);
    expect(stream.listenerCount("data")).toBe(0);
  });

  it("a request that fails fails its reader, after the chunks that came before", async () => {
    const stream = requestWith([Buffer.from("one")]);
    const reset = new Error("aborted");
    const reader = requestChunks(stream as unknown as IncomingMessage);
    expect(String((await reader.next()).value)).toBe("one");
    setImmediate(() => stream.destroy(reset));
    await expect(reader.next()).rejects.toBe(reset);
  });
});
