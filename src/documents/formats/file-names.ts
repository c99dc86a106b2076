// What a document's file name may be, wherever it comes from (the edge's multipart part, the
// console's X-File-Name, an email attachment, a CreateRun call): text that can be shown, logged and
// stored as it is, no longer than a file system holds.

/** Control characters (C0, DEL, C1), line or paragraph separators, or a lone surrogate: text no file name may hold. */
const UNPRINTABLE = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/**
 * The longest file name taken, in UTF-8 bytes: what most file systems hold (NAME_MAX), so a real
 * file's name always fits. A longer one would also be cut short silently by the multipart parser
 * past its header limit (about 80 KB), so it is refused rather than stored as something else.
 */
export const MAX_FILE_NAME_BYTES = 255;

/** Whether a file name is longer than MAX_FILE_NAME_BYTES in UTF-8. */
export function isTooLongFileName(name: string): boolean {
  return name.length > MAX_FILE_NAME_BYTES || Buffer.byteLength(name) > MAX_FILE_NAME_BYTES;
}

/** Whether `text` can be shown, logged and stored as it is. */
export function isPrintable(text: string): boolean {
  return text.isWellFormed() && !UNPRINTABLE.test(text);
}

/** Whether `name` names a file and not a folder: not empty, ".", "..", nor holding a slash. */
export function isBaseName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\");
}

/** Whether `name` is one a document may have: its own name, printable, within MAX_FILE_NAME_BYTES. */
export function isValidFileName(name: string): boolean {
  return isBaseName(name) && isPrintable(name) && !isTooLongFileName(name);
}

/** What isValidFileName asks, in words, for an error's message. */
export const FILE_NAME_RULE = `a file's own name (not empty, ".", ".." nor holding "/" or "\\") without control characters, line or paragraph separators or unpaired surrogates, at most ${MAX_FILE_NAME_BYTES} bytes in UTF-8`;

/**
 * `stem` + `suffix`, with as much of `stem` as keeps the name within MAX_FILE_NAME_BYTES (whole
 * characters only): a split's part of a document whose name is near the limit stays a name the edge
 * would take.
 */
export function nameWithSuffix(stem: string, suffix: string): string {
  const room = MAX_FILE_NAME_BYTES - Buffer.byteLength(suffix);
  if (Buffer.byteLength(stem) <= room) return stem + suffix;
  let kept = "";
  let bytes = 0;
  for (const character of stem) {
    bytes += Buffer.byteLength(character);
    if (bytes > room) break;
    kept += character;
  }
  return kept + suffix;
}
