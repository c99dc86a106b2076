import { describe, expect, it } from "vitest";
import { isBaseName, isPrintable, isTooLongFileName, MAX_FILE_NAME_BYTES, nameWithSuffix } from "../../src/documents/formats/file-names.ts";

describe("file names", () => {
  it("a file's own name: not empty, '.', '..', nor with a slash or backslash", () => {
    for (const name of ["invoice.pdf", ".hidden", "a..b.pdf", "Rechnung März.pdf"]) expect(isBaseName(name), name).toBe(true);
    for (const name of ["", ".", "..", "reports/q3.pdf", "reports\\q3.pdf", "q3/"]) expect(isBaseName(name), name).toBe(false);
  });

  it("printable: no control character, line or paragraph separator, nor lone surrogate", () => {
    expect(isPrintable("Facture n° 7 📄.pdf")).toBe(true);
    for (const name of ["a\u0000b", "a\nb", "a\u007fb", "a\u0085b", "a\u2028b", "a\u2029b", "a\ud800b"])
      expect(isPrintable(name), JSON.stringify(name)).toBe(false);
  });

  it("at most 255 bytes in UTF-8", () => {
    expect(isTooLongFileName("a".repeat(MAX_FILE_NAME_BYTES))).toBe(false);
    expect(isTooLongFileName("a".repeat(MAX_FILE_NAME_BYTES + 1))).toBe(true);
    // 128 characters, 256 bytes.
    expect(isTooLongFileName("é".repeat(128))).toBe(true);
  });

  it("a suffix keeps the name within 255 bytes, cutting the stem between whole characters", () => {
    expect(nameWithSuffix("invoice", "-part-1.pdf")).toBe("invoice-part-1.pdf");
    const long = nameWithSuffix("é".repeat(127), "-part-12.pdf");
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(MAX_FILE_NAME_BYTES);
    expect(long).toBe(`${"é".repeat(121)}-part-12.pdf`);
    expect(isPrintable(long)).toBe(true);
    const emoji = nameWithSuffix("📄".repeat(70), "-part-1.tiff");
    expect(emoji.isWellFormed()).toBe(true);
    expect(Buffer.byteLength(emoji)).toBeLessThanOrEqual(MAX_FILE_NAME_BYTES);
  });
});
