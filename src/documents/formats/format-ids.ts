/** Every format id a trigger can accept, in the order the docs list them. */
export const FORMAT_IDS = [
  "pdf",
  "jpeg",
  "png",
  "tiff",
  "heic",
  "webp",
  "gif",
  "docx",
  "xlsx",
  "pptx",
  "odt",
  "ods",
  "rtf",
  "epub",
  "txt",
  "csv",
  "json",
  "html",
  "md",
  "eml",
] as const;

export type FormatId = (typeof FORMAT_IDS)[number];

export function isFormatId(value: string): value is FormatId {
  return (FORMAT_IDS as readonly string[]).includes(value);
}
