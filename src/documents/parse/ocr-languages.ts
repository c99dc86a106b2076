import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The OCR languages installed with the service (Tesseract codes): each is an npm package of
 * trained data, `@tesseract.js-data/<code>`, so nothing is downloaded at run time. English, German
 * and French are a few megabytes each; adding one is adding its package here and to package.json.
 */
export const OCR_LANGUAGES = ["eng", "deu", "fra"] as const;

export type OcrLanguage = (typeof OCR_LANGUAGES)[number];

/** The languages OCR uses when a parse node names none. */
export const DEFAULT_OCR_LANGUAGES: readonly OcrLanguage[] = ["eng"];

export function isOcrLanguage(value: string): value is OcrLanguage {
  return (OCR_LANGUAGES as readonly string[]).includes(value);
}

const require = createRequire(import.meta.url);

/**
 * The gzipped trained data of an installed language: the "best_int" LSTM model, the one
 * Tesseract's LSTM engine (the only one loaded) uses.
 */
export function trainedDataFile(language: OcrLanguage): string {
  const packageFolder = dirname(require.resolve(`@tesseract.js-data/${language}/package.json`));
  return join(packageFolder, "4.0.0_best_int", `${language}.traineddata.gz`);
}
