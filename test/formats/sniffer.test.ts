import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { FormatSniffer, HEAD_BYTES, type SniffedBytes } from "../../src/documents/formats/sniffer.ts";
import { Utf8StreamValidator } from "../../src/documents/formats/utf8-stream.ts";

function sniff(chunks: Uint8Array[]): SniffedBytes {
  const sniffer = new FormatSniffer();
  for (const chunk of chunks) sniffer.push(chunk);
  return sniffer.result();
}

/** `bytes` cut at the given offsets. */
function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length];
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
}

describe("head", () => {
  test("a file no larger than the head is kept whole", () => {
    const bytes = Buffer.alloc(HEAD_BYTES, "x");
    const result = sniff(splitAt(bytes, [1, 1000, HEAD_BYTES - 1]));
    expect(result.complete).toBe(true);
    expect(Buffer.from(result.head).equals(bytes)).toBe(true);
  });

  test("one byte more and only the head is kept", () => {
    const bytes = Buffer.alloc(HEAD_BYTES + 1, "x");
    bytes[0] = 0x41;
    const result = sniff([bytes]);
    expect(result.complete).toBe(false);
    expect(result.head.length).toBe(HEAD_BYTES);
    expect(result.head[0]).toBe(0x41);
  });

  test("the head is a copy: reusing a chunk's buffer does not change it", () => {
    const chunk = Buffer.from("abc");
    const sniffer = new FormatSniffer();
    sniffer.push(chunk);
    chunk.fill("z");
    expect(Buffer.from(sniffer.result().head).toString()).toBe("abc");
  });

  test("an empty stream", () => {
    const result = sniff([]);
    expect([result.head.length, result.complete, result.text]).toEqual([0, true, true]);
  });

  test("a large file streamed in many chunks does not grow memory", () => {
    // About 256 MiB of multi-byte text through one reused chunk: the whole text check runs on every chunk.
    const chunk = Buffer.from("Zoë,Zürich,€,😀\n".repeat(3000));
    const sniffer = new FormatSniffer();
    const before = process.memoryUsage();
    for (let i = 0; i < 4096; i++) sniffer.push(chunk);
    const after = process.memoryUsage();
    const result = sniffer.result();
    expect(result.head.length).toBe(HEAD_BYTES);
    expect(result.text).toBe(true);
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(8 * 1024 * 1024);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(32 * 1024 * 1024);
  });
});

describe("text", () => {
  test("valid UTF-8 without NUL is text", () => {
    expect(sniff([Buffer.from("héllo, wörld €😀\n")]).text).toBe(true);
  });

  test("an upload declared as no text format is never text, and keeps its head", () => {
    const sniffer = new FormatSniffer(false);
    sniffer.push(Buffer.from("%PDF-1.7 plain ASCII all the way"));
    expect(sniffer.result()).toMatchObject({ text: false, complete: true });
    expect(Buffer.from(sniffer.result().head).toString()).toBe("%PDF-1.7 plain ASCII all the way");
  });

  test("a NUL byte in a late chunk is not text", () => {
    expect(sniff([Buffer.alloc(HEAD_BYTES * 2, "a"), Buffer.from([0x61, 0x00])]).text).toBe(false);
  });

  test("a NUL in a late chunk is not text, in UTF-8 or in a detected encoding", () => {
    expect(sniff([Buffer.alloc(HEAD_BYTES * 2, "a"), Buffer.from([0x00])]).text).toBe(false);
    expect(sniff([Buffer.alloc(HEAD_BYTES * 2, "a"), Buffer.from([0xe9, 0x00])]).text).toBe(false);
  });

  test("a character split at every possible point is still valid", () => {
    const bytes = Buffer.from("a€b😀cé𝄞");
    for (let cut = 1; cut < bytes.length; cut++) expect(sniff(splitAt(bytes, [cut])).text, `cut at ${cut}`).toBe(true);
    expect(sniff(splitAt(bytes, Array.from(bytes.keys()))).text).toBe(true); // one byte per chunk
  });

  test("a stream that ends inside a character is not text", () => {
    const bytes = Buffer.from("😀").subarray(0, 3);
    expect(sniff([bytes]).text).toBe(false);
    expect(sniff(splitAt(bytes, [1, 2])).text).toBe(false);
  });
});

describe("Utf8StreamValidator agrees with isUtf8 on the whole stream", () => {
  // Mostly-valid bytes (encoded strings with a few bytes flipped) find more edge cases than random bytes.
  const nearlyUtf8 = fc
    .tuple(fc.string({ unit: "binary", maxLength: 64 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }))
    .map(([value, flips]) => {
      const bytes = Buffer.from(value);
      for (const [at, byte] of flips) if (bytes.length > 0) bytes[at % bytes.length] = byte;
      return new Uint8Array(bytes);
    });
  const anyBytes = fc.oneof(nearlyUtf8, fc.uint8Array({ maxLength: 64 }));

  test("for any bytes split anywhere", () => {
    fc.assert(
      fc.property(anyBytes, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const validator = new Utf8StreamValidator();
        for (const chunk of splitAt(
          bytes,
          cuts.map((cut) => cut % (bytes.length + 1)),
        ))
          validator.push(chunk);
        expect(validator.end()).toBe(isUtf8(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  test("isUtf8 agrees with a fatal TextDecoder (the definition we mean)", () => {
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        let decodes = true;
        try {
          new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch {
          decodes = false;
        }
        expect(isUtf8(bytes)).toBe(decodes);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("encoding", () => {
  function sniffDeclared(bytes: Uint8Array, contentType: string, html: boolean, chunkSize = 5): SniffedBytes {
    const sniffer = new FormatSniffer(true, { contentType, html });
    for (let at = 0; at < bytes.length; at += chunkSize) sniffer.push(bytes.subarray(at, at + chunkSize));
    return sniffer.result();
  }

  test("reports the encoding and how it was decided", () => {
    const bom = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from("hi", "utf16le").swap16()]);
    expect(sniffDeclared(bom, "text/plain; charset=windows-1252", false)).toMatchObject({ text: true, encoding: { name: "utf-16be", source: "bom" } });
    expect(sniffDeclared(Buffer.from("Zoë", "latin1"), "text/plain; charset=latin1", false)).toMatchObject({
      text: true,
      encoding: { name: "windows-1252", source: "content-type" },
    });
    const page = Buffer.from('<meta charset="windows-1252"><p>Zoë</p>', "latin1");
    expect(sniffDeclared(page, "text/html", true)).toMatchObject({ text: true, encoding: { name: "windows-1252", source: "meta" } });
    expect(sniffDeclared(page, "text/html", false)).toMatchObject({ text: true, encoding: { source: "detected" } });
  });

  test("an unknown declared charset is not text, and has no encoding", () => {
    const result = sniffDeclared(Buffer.from("hello"), "text/plain; charset=klingon", false);
    expect(result.text).toBe(false);
    expect(result.encoding).toBeUndefined();
  });

  test("a head larger than one chunk decides after the meta prescan and still checks every byte", () => {
    const bytes = Buffer.concat([Buffer.from('<meta charset="windows-1252">'), Buffer.alloc(HEAD_BYTES * 2, "a"), Buffer.from([0x00])]);
    expect(sniffDeclared(bytes, "text/html", true, HEAD_BYTES + 7).text).toBe(false);
    expect(sniffDeclared(bytes.subarray(0, -1), "text/html", true, HEAD_BYTES + 7).text).toBe(true);
  });
});

describe("legacy encodings", () => {
  const windows1252 = (text: string) => Buffer.from(text.replace(/€/g, "\u0080"), "latin1");
  const csv = "Name,Ville,Prix\r\nCafé crème,Besançon,3 €\r\nNaïve théière,Orléans,12 €\r\nPâté,Nîmes,7 €\r\n";

  test("text that declares nothing and is not UTF-8 is text in the encoding detected from its bytes", () => {
    expect(sniff([windows1252(csv)])).toMatchObject({ text: true, encoding: { name: "windows-1252", source: "detected" } });
    // In small chunks, and past the head: the detection happens where UTF-8 first fails.
    const long = windows1252("plain ascii line\n".repeat(5000) + csv.repeat(50));
    expect(sniff(splitAt(long, [100, 70_000, 90_000]))).toMatchObject({ text: true, encoding: { name: "windows-1252", source: "detected" } });
  });

  test("a binary file is still not text, and a declared charset is not second-guessed", () => {
    expect(sniff([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0xff, 0x00])]).text).toBe(false);
    const declared = new FormatSniffer(true, { contentType: "text/csv; charset=utf-8", html: false });
    declared.push(windows1252(csv));
    expect(declared.result()).toMatchObject({ text: false, encoding: { name: "utf-8", source: "content-type" } });
  });
});
