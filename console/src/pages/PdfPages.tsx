/**
 * A PDF's pages rendered in the page with pdf.js, each with the marks of the values read on it.
 * Loaded on demand (React.lazy) so the console's first page does not carry pdf.js. The worker,
 * the standard fonts, the CMaps and the image decoders come from the console's own build (see
 * console/pdfjs-assets.ts): nothing is fetched from elsewhere.
 */
import { GlobalWorkerOptions, getDocument, type PDFDocumentProxy } from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";
import { useEffect, useRef, useState } from "react";
import { DocumentMarks, type Mark } from "./DocumentMarks.tsx";

GlobalWorkerOptions.workerSrc = workerUrl;

/** Where the build puts pdf.js's data files, below the console's base. */
const ASSETS = new URL(`${import.meta.env.BASE_URL}pdfjs/`, location.href).href;

/** Rendered pixels per PDF point (before the screen's own ratio): sharp at the width the review column gives a page. */
const SCALE = 1.5;

function PdfPage({
  pdf,
  number,
  marks,
  active,
  name,
}: {
  pdf: PDFDocumentProxy;
  number: number;
  marks: readonly Mark[];
  active: string | undefined;
  name: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [size, setSize] = useState<{ width: number; height: number } | undefined>(undefined);
  useEffect(() => {
    let cancelled = false;
    let task: ReturnType<Awaited<ReturnType<PDFDocumentProxy["getPage"]>>["render"]> | undefined;
    void pdf.getPage(number).then(
      (page) => {
        const element = canvas.current;
        if (cancelled || element === null) return;
        // Boxes are in points at scale 1, from the top-left corner: the unscaled viewport's size.
        const points = page.getViewport({ scale: 1 });
        const viewport = page.getViewport({ scale: SCALE * (window.devicePixelRatio || 1) });
        element.width = Math.ceil(viewport.width);
        element.height = Math.ceil(viewport.height);
        setSize({ width: points.width, height: points.height });
        task = page.render({ canvas: element, viewport });
        task.promise.catch(() => {
          // cancelled when the page is left; a page that cannot be drawn stays blank
        });
      },
      () => {
        // the document was closed (the page left) before this page was read: "Transport destroyed"
      },
    );
    return () => {
      cancelled = true;
      task?.cancel();
    };
  }, [pdf, number]);
  return (
    <div className="page" data-page={number}>
      <canvas ref={canvas} role="img" aria-label={`Page ${number} of ${name}`} />
      {size !== undefined && <DocumentMarks marks={marks.filter((mark) => mark.page === number)} width={size.width} height={size.height} active={active} />}
    </div>
  );
}

/** The pages of the PDF `bytes`, one under another. */
export default function PdfPages({ bytes, name, marks, active }: { bytes: ArrayBuffer; name: string; marks: readonly Mark[]; active: string | undefined }) {
  const [pdf, setPdf] = useState<PDFDocumentProxy | { error: string } | undefined>(undefined);
  useEffect(() => {
    const task = getDocument({
      // A copy: pdf.js hands its data to the worker, and the page may be drawn again from the same bytes.
      data: new Uint8Array(bytes.slice(0)),
      cMapUrl: `${ASSETS}cmaps/`,
      standardFontDataUrl: `${ASSETS}standard_fonts/`,
      wasmUrl: `${ASSETS}wasm/`,
      iccUrl: `${ASSETS}iccs/`,
      enableXfa: false,
    });
    task.promise.then(setPdf, (error: unknown) => setPdf({ error: (error as Error).message }));
    return () => {
      void task.destroy();
    };
  }, [bytes]);
  if (pdf === undefined) return <p className="loading">Rendering the document…</p>;
  if ("error" in pdf) return <p className="notice error">The document cannot be shown: {pdf.error}</p>;
  return (
    <div className="pages">
      {Array.from({ length: pdf.numPages }, (_, index) => index + 1).map((number) => (
        <PdfPage key={number} pdf={pdf} number={number} marks={marks} active={active} name={name} />
      ))}
    </div>
  );
}
