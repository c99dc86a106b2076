import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorker, OEM, type Worker } from "tesseract.js";
import type { BoundingBox } from "./elements/element.ts";
import type { OcrImage } from "./ocr-images.ts";
import { type OcrLanguage, trainedDataFile } from "./ocr-languages.ts";

/** A paragraph OCR found, with its box on the page (PDF points, or the picture's pixels). */
export interface OcrParagraph {
  text: string;
  bbox: BoundingBox;
}

/** What OCR read from one image. */
export interface OcrResult {
  text: string;
  /** Tesseract's mean word confidence, 0-100. */
  confidence: number;
  /** The engine's paragraphs, in its reading order. */
  paragraphs: OcrParagraph[];
}

/**
 * Tesseract (tesseract.js: the C++ engine compiled to WebAssembly, run in its own worker thread)
 * with trained data from the installed `@tesseract.js-data/*` packages: it never fetches anything.
 *
 * An engine is expensive to start (about a second: the model is read and inflated), so engines are
 * kept and reused, one per language combination, at most MAX_ENGINES of them in a thread; the
 * least recently used is terminated when another is needed. Everything here runs wherever the parse
 * code runs (a pool process), nothing assumes the main thread.
 */
const MAX_ENGINES = 2;

const engines = new Map<string, Promise<Worker>>();

/** The tail of each engine's queue: one image at a time, so the resolution set for an image is the one it is read at. */
const queues = new WeakMap<Promise<Worker>, Promise<unknown>>();

/** Reads the text of an image in the given languages. */
export async function recognize(image: OcrImage, languages: readonly OcrLanguage[]): Promise<OcrResult> {
  const worker = engine(languages);
  const result = (queues.get(worker) ?? Promise.resolve()).catch(() => {}).then(() => read(worker, image));
  queues.set(worker, result);
  return result;
}

async function read(engine: Promise<Worker>, { png, dpi, scale }: OcrImage): Promise<OcrResult> {
  const worker = await engine;
  await worker.setParameters({ user_defined_dpi: String(dpi) });
  const { data } = await worker.recognize(Buffer.from(png.buffer, png.byteOffset, png.byteLength), {}, { text: true, blocks: true });
  const onPage = (value: number) => Math.round((value / scale) * 100) / 100;
  const paragraphs = (data.blocks ?? [])
    .flatMap((block) => block.paragraphs)
    .map(({ text, bbox }): OcrParagraph => ({ text: text.trim(), bbox: [onPage(bbox.x0), onPage(bbox.y0), onPage(bbox.x1), onPage(bbox.y1)] }))
    .filter((paragraph) => paragraph.text !== "");
  return { text: data.text.trim(), confidence: Math.round(data.confidence * 10) / 10, paragraphs };
}

/** How many engines are kept (each holds its WebAssembly memory until terminated). */
export function ocrEnginesKept(): number {
  return engines.size;
}

/** Terminates every kept engine (their threads would keep the process alive). */
export async function closeOcr(): Promise<void> {
  const all = [...engines.values()];
  engines.clear();
  await Promise.allSettled(all.map(async (worker) => (await worker).terminate()));
}

function engine(languages: readonly OcrLanguage[]): Promise<Worker> {
  const key = languages.join("+"); // order matters: Tesseract prefers the first language
  let worker = engines.get(key);
  if (worker !== undefined) {
    engines.delete(key); // re-inserted below: Map order is the recency order
  } else {
    worker = startEngine(languages);
    worker.catch(() => engines.delete(key));
  }
  engines.set(key, worker);
  while (engines.size > MAX_ENGINES) {
    const [oldestKey, oldest] = engines.entries().next().value!;
    engines.delete(oldestKey);
    // Once the images already queued on it are read.
    const drained = (queues.get(oldest) ?? Promise.resolve()).catch(() => {});
    void drained
      .then(() => oldest)
      .then((done) => done.terminate())
      .catch(() => {});
  }
  return worker;
}

/**
 * tesseract.js reads every language from one folder (`langPath`), and the packages each have their
 * own: a temporary folder of copies of the installed files (a few MB) serves while the engine
 * starts, and is removed once it has read them. Copies, not links: Node's permission model, under
 * which the task pool runs this, refuses `symlink` to a process that may not read and write
 * everywhere. `cacheMethod: "none"`: nothing is written beside them.
 */
async function startEngine(languages: readonly OcrLanguage[]): Promise<Worker> {
  const folder = await mkdtemp(join(tmpdir(), "docpipe-ocr-"));
  try {
    await Promise.all(languages.map((language) => copyFile(trainedDataFile(language), join(folder, `${language}.traineddata.gz`))));
    // Without an errorHandler tesseract.js throws a failed job's error from a message listener (the
    // process would crash); with one, the job's promise still rejects. A failed start rejects no
    // promise of createWorker's (it would wait forever): the handler ends the wait instead.
    let failed: (error: Error) => void = () => {};
    const failure = new Promise<never>((_resolve, reject) => (failed = reject));
    failure.catch(() => {}); // later job failures reach their own promises; this one may go unobserved
    const worker = createWorker([...languages], OEM.LSTM_ONLY, {
      langPath: folder,
      cacheMethod: "none",
      gzip: true,
      errorHandler: (error: unknown) => failed(new Error(`the OCR engine failed: ${String(error)}`)),
    });
    return await Promise.race([worker, failure]);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
