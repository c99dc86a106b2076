import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { describe, expect, it } from "vitest";
import { redactUrl } from "../../src/platform/observability/otel-sdk.ts";

/** The url.full a client span of a request to `url` is exported with. */
function exportedUrl(url: string): unknown {
  const attributes: Record<string, unknown> = {};
  // A real ClientRequest, never sent: the hook reads what the HTTP instrumentation hands it.
  const request = (url.startsWith("https:") ? httpsRequest : httpRequest)(url);
  request.on("error", () => {});
  redactUrl({ setAttribute: (key, value) => ((attributes[key] = value), undefined as never) }, request);
  request.destroy();
  return attributes["url.full"];
}

describe("callback URLs in client spans", () => {
  it("keep only scheme://host/ and a redacted path: tokens in the path (chat webhooks) or query never leave", () => {
    expect(exportedUrl("https://hooks.example.com/services/T000/B000/XXXXsecretXXXX")).toBe("https://hooks.example.com/REDACTED");
    expect(exportedUrl("http://127.0.0.1:8099/hook?token=secret")).toBe("http://127.0.0.1:8099/REDACTED");
    expect(exportedUrl("https://receiver.example:8443/")).toBe("https://receiver.example:8443/");
    expect(exportedUrl("https://receiver.example/?token=secret")).toBe("https://receiver.example/REDACTED");
  });
});
