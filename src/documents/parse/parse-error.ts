/** Why a document cannot be parsed, as the step's error code. */
export const PARSE_ERROR_CODES = ["document_encrypted", "document_corrupt", "format_unsupported"] as const;
export type ParseErrorCode = (typeof PARSE_ERROR_CODES)[number];

/** A document that cannot be parsed; the code and message are shown on the step. */
export class ParseError extends Error {
  override name = "ParseError";
  /** An own property, so it survives the trip from the pool's process. */
  readonly code: ParseErrorCode;

  constructor(message: string, code: ParseErrorCode = "document_corrupt") {
    super(message);
    this.code = code;
  }
}
