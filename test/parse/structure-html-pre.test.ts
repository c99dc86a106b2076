import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: <pre>", () => {
  it("keeps a code block's indentation and spacing", async () => {
    const code = "def total(items):\n    if not items:\n        return 0\n    return sum(i.price  *  i.qty for i in items)";
    const output = await parseDocument("html", Buffer.from(`<html><body><p>Example:</p><pre><code>${code}</code></pre></body></html>`));
    // Today: "def total(items):\nif not items:\nreturn 0\nreturn sum(i.price * i.qty for i in items)".
    expect(output.elements).toContainEqual({ type: "CodeSnippet", text: code });
    expect(output.markdown).toContain(`\`\`\`\n${code}\n\`\`\``);
  });
});
