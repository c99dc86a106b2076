import { OcrMode, type ParseNode } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { ParseOptions } from "./parse-document.ts";
import type { OcrMode as OcrModeName } from "./ocr-pages.ts";
import { isOcrLanguage } from "./ocr-languages.ts";

const MODE_NAMES: Record<OcrMode, OcrModeName> = {
  [OcrMode.UNSPECIFIED]: "auto",
  [OcrMode.AUTO]: "auto",
  [OcrMode.ALWAYS]: "always",
  [OcrMode.NEVER]: "never",
};

/**
 * A parse node's settings and the stored file's Content-Type as plain data (they cross into a pool
 * thread by structured clone). The pipeline was validated when saved; a language no longer
 * installed is dropped rather than failing the run.
 */
export function parseOptions(node: ParseNode, contentType: string): ParseOptions {
  return { contentType, ocr: MODE_NAMES[node.ocr] ?? "auto", languages: node.languages.filter(isOcrLanguage), rulingLines: node.rulingLines };
}
