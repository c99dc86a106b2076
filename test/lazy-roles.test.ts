import { describe, expect, it } from "vitest";
import { staticallyImportedPackages } from "./support/static-imports.ts";

describe("what a process loads at start", () => {
  it("loads the worker, the email server, the S3 client and the OpenID client only in a process that runs them", () => {
    // An edge's heap holds no parsing, OCR, mail or S3 library: every full collection marks it all.
    const loaded = staticallyImportedPackages("src/app/start.ts");
    expect(loaded).toContain("fastify");
    const notHere = [
      "unpdf",
      "pdf-lib",
      "@napi-rs/canvas",
      "tesseract.js",
      "heic-decode",
      "sharp",
      "image-size",
      "marked",
      "mailparser",
      "smtp-server",
      "nodemailer",
      "openid-client",
    ];
    for (const library of [...notHere, "@aws-sdk/client-s3", "@aws-sdk/lib-storage"]) {
      expect(loaded, library).not.toContain(library);
    }
  });
});
