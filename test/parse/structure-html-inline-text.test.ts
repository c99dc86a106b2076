import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: the text of inline elements inside a word", () => {
  it("does not split words at inline tags in `text`", async () => {
    const output = await parseDocument(
      "html",
      Buffer.from("<p>Water is H<sub>2</sub>O, the 10<sup>th</sup> edition is <a href=/x>here</a>s and <b>T</b>his drop cap e<i>mph</i>asis.</p>"),
    );
    const expected = "Water is H2O, the 10th edition is heres and This drop cap emphasis.";
    expect(output.elements).toEqual([{ type: "NarrativeText", text: expected }]);
    // Today `text` is "Water is H 2 O, the 10 th edition is here s and T his drop cap e mph asis.".
    expect(output.text).toBe(expected);
  });
});
