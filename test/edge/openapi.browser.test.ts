import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchChromium } from "../support/chromium.ts";
import { type EdgeHarness, startEdge } from "../support/edge.ts";

// The API reference (/docs) in a real browser: an end-to-end test (it starts Chromium), apart from
// the document's own checks in openapi.test.ts.

let edge: EdgeHarness;
beforeAll(async () => {
  edge = await startEdge();
  return edge.close;
});

const hasChromium = existsSync(CHROMIUM);
describe("GET /docs in a browser", () => {
  it.skipIf(!hasChromium)("renders in a browser from this server alone", async () => {
    const browser: Browser = await launchChromium();
    try {
      const browserPage = await browser.newPage();
      const requested: string[] = [];
      browserPage.on("request", (request) => {
        requested.push(request.url());
      });
      // A load the policy blocks (a font or script from elsewhere) shows up only as a console error.
      const errors: string[] = [];
      browserPage.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text());
      });
      await browserPage.goto(`${edge.url}/docs`);
      await browserPage.getByText("Submit a document to a pipe").first().waitFor();
      const rendered = await browserPage.textContent("body");
      for (const text of ["/pipes/{pipeId}/trigger", "/pipes/{pipeId}/http-trigger", "/healthz", "/readyz"]) expect(rendered).toContain(text);
      expect(requested.length).toBeGreaterThan(2);
      for (const url of requested) expect(url.startsWith(`${edge.url}/`) || url.startsWith("data:"), url).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
