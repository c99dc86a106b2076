import { OcrModeSchema, type ParseNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { isOcrLanguage, OCR_LANGUAGES } from "../../../documents/parse/ocr-languages.ts";
import { settingsInvalid } from "../settings.ts";

/** A known OCR mode; installed OCR languages, each once. */
export function checkParseSettings(parse: ParseNode, path: string): void {
  if (!OcrModeSchema.values.some((known) => known.number === parse.ocr))
    throw settingsInvalid(`${path}.ocr`, "must be OCR_MODE_AUTO, OCR_MODE_ALWAYS or OCR_MODE_NEVER");
  parse.languages.forEach((language, index) => {
    if (!isOcrLanguage(language)) {
      throw settingsInvalid(`${path}.languages[${index}]`, `OCR language "${language}" is not installed; installed: ${OCR_LANGUAGES.join(", ")}`);
    }
    if (parse.languages.indexOf(language) !== index) throw settingsInvalid(`${path}.languages[${index}]`, `"${language}" is listed twice`);
  });
}
