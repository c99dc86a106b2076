import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { OcrMode, ParseNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { parseOptions } from "../../src/documents/parse/parse-options.ts";

describe("a parse node's settings as the parse reads them", () => {
  it("carries the OCR mode, the installed languages and the ruling lines setting", () => {
    const node = create(ParseNodeSchema, { ocr: OcrMode.NEVER, languages: ["deu", "klingon"], rulingLines: true });
    expect(parseOptions(node, "application/pdf")).toEqual({ contentType: "application/pdf", ocr: "never", languages: ["deu"], rulingLines: true });
  });

  it("defaults to OCR where needed, English, and tables from the text alone", () => {
    expect(parseOptions(create(ParseNodeSchema), "text/plain")).toEqual({ contentType: "text/plain", ocr: "auto", languages: [], rulingLines: false });
  });
});
