import { describe, expect, it } from "vitest";
import type { Element } from "../../src/documents/parse/elements/element.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { placedTextPdf } from "./samples.ts";

// The PDF layout's growth on pathological pages, timed against a quarter of the same page: in the
// end-to-end tier, since each check parses pages of 20,000 lines and 40,000 runs six times on purpose.

const withoutBoxes = (elements: Element[] | undefined) => (elements ?? []).map(({ bbox: _bbox, ...rest }) => rest);

describe("PDF layout in linear time", () => {
  // Each line re-sorted the block above it to find its gutters, and each run of a line filtered every gutter.
  it.each([
    [
      "a page of 20,000 lines in small type",
      (count: number) => Array.from({ length: count }, (_, line) => ({ x: 72, y: 790 - line * 0.039, size: 0.03, text: `line ${line}` })),
      20_000,
      (elements: Element[]) =>
        expect(withoutBoxes(elements)).toEqual([
          { type: "NarrativeText", text: Array.from({ length: 20_000 }, (_, line) => `line ${line}`).join(" "), page: 1 },
        ]),
    ],
    [
      "a line of 40,000 runs apart",
      (count: number) => Array.from({ length: count }, (_, run) => ({ x: 1 + run * 0.015, y: 400, size: 0.003, text: "a" })),
      40_000,
      (elements: Element[]) => {
        expect(elements).toHaveLength(40_000);
        expect(elements.every((element) => element.text === "a")).toBe(true);
      },
    ],
  ])("reads %s in linear time", async (_, runsOf, count, check) => {
    const timed = async (runs: ReturnType<typeof runsOf>) => {
      const pdf = placedTextPdf([runs]);
      const started = performance.now();
      const { elements = [] } = await parseDocument("pdf", pdf, { ocr: "never" });
      return { ms: performance.now() - started, elements };
    };
    // Against a quarter of the page parsed just before, not a wall-clock bound a busy machine breaks:
    // linear work takes about 4 times as long (less, with the parse's fixed costs), quadratic 16.
    // The better of two runs of each, so one run's collection or preemption is not read as growth
    // (a single run of the whole once read 8.6 in a run of the whole suite).
    const quarter = Math.min((await timed(runsOf(count / 4))).ms, (await timed(runsOf(count / 4))).ms);
    const [first, second] = [await timed(runsOf(count)), await timed(runsOf(count))];
    expect(Math.min(first.ms, second.ms) / quarter).toBeLessThan(10);
    check(second.elements);
  });
});
