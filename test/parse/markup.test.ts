import { describe, expect, it } from "vitest";
import { htmlElements, readHtml } from "../../src/documents/parse/elements/html.ts";
import { MarkupTooDeepError, type ScanOptions, scanMarkup } from "../../src/documents/parse/elements/markup.ts";

/** The events of one scan, as short strings: `<name attr=value>`, `</name>`, `"text"`, `!--`. */
function events(markup: string, options: ScanOptions = {}, attributeNames: string[] = []): string[] {
  const seen: string[] = [];
  scanMarkup(
    markup,
    {
      onopentag(name, attributes) {
        const shown = attributeNames.flatMap((attribute) => {
          const value = attributes.get(attribute);
          return value === undefined ? [] : [` ${attribute}=${value}`];
        });
        seen.push(`<${name}${shown.join("")}>`);
      },
      ontext: (text) => seen.push(JSON.stringify(text)),
      onclosetag: (name) => seen.push(`</${name}>`),
      oncomment: () => seen.push("!--"),
    },
    options,
  );
  return seen;
}

describe("scanMarkup", () => {
  it("HTML: implies the end tags pages leave out (paragraphs, list items, table rows and cells) and closes what is open at the end", () => {
    expect(events("<p>a<p>b<ul><li>1<li>2</ul><table><tr><td>x<td>y<tr><td>z</table><div>open")).toEqual([
      "<p>",
      '"a"',
      "</p>",
      "<p>",
      '"b"',
      "</p>",
      "<ul>",
      "<li>",
      '"1"',
      "</li>",
      "<li>",
      '"2"',
      "</li>",
      "</ul>",
      "<table>",
      "<tr>",
      "<td>",
      '"x"',
      "</td>",
      "<td>",
      '"y"',
      "</td>",
      "</tr>",
      "<tr>",
      "<td>",
      '"z"',
      "</td>",
      "</tr>",
      "</table>",
      "<div>",
      '"open"',
      "</div>",
    ]);
  });

  it("HTML: folds names to lowercase, reads quoted, unquoted and bare attributes (a quoted '>' included), and closes void elements at once", () => {
    expect(events(`<IMG ALT="a > b" SRC=x.png HIDDEN><Br>t</BR>`, {}, ["alt", "src", "hidden"])).toEqual([
      "<img alt=a > b src=x.png hidden=>",
      "</img>",
      "<br>",
      "</br>",
      '"t"',
      "<br>",
      "</br>",
    ]);
  });

  it("HTML: reads script and style content as raw text up to their own end tag, and decodes references elsewhere", () => {
    expect(events("<script>if (a</p>&amp;) {}</SCRIPT ><p>caf&eacute; &amp; &#x41;&nbsp;</p><!-- <p>no</p> -->")).toEqual([
      "<script>",
      '"if (a</p>&amp;) {}"',
      "</script>",
      "<p>",
      '"café & A\u00a0"',
      "</p>",
      "!--",
    ]);
  });

  it("HTML: a '/' that ends an unquoted value is the value's, not a self-closing tag; CDATA is a comment; frames' markup is markup", () => {
    expect(events("<a href=http://x.com/>t</a><![CDATA[hidden]]><noframes><p>x</p></noframes>", {}, ["href"])).toEqual([
      "<a href=http://x.com/>",
      '"t"',
      "</a>",
      "<noframes>",
      "<p>",
      '"x"',
      "</p>",
      "</noframes>",
    ]);
    expect(events(`<br/><img alt="a"/><p class=x />`, {}, [])).toEqual(["<br>", "</br>", "<img>", "</img>", "<p>", "</p>"]);
  });

  it("HTML: '<' that starts no tag is text, and a tag left open at the end is dropped", () => {
    expect(events("1 < 2 <3 <p class='x")).toEqual(['"1 "', '"<"', '" 2 "', '"<"', '"3 "']);
  });

  it("XML: names as written, '/>' closes, CDATA is text as it is, declarations and instructions are skipped", () => {
    expect(
      events(`<?xml version="1.0"?><!DOCTYPE x><w:p w:val="a&amp;b"><w:t>x &lt; y</w:t><w:br/><![CDATA[<raw> &amp;]]></w:p>`, { xml: true }, ["w:val"]),
    ).toEqual(["<w:p w:val=a&b>", "<w:t>", '"x < y"', "</w:t>", "<w:br>", "</w:br>", '"<raw> &amp;"', "</w:p>"]);
  });

  it("refuses nesting deeper than a document has, and reads the flat stream whatever its depth", () => {
    expect(() => scanMarkup("<div>".repeat(600), {})).toThrow(MarkupTooDeepError);
    expect(() => scanMarkup("<a>".repeat(600), {}, { xml: true })).toThrow(MarkupTooDeepError);
    expect(() => scanMarkup("<div>".repeat(600), {}, { flat: true })).not.toThrow();
    // Paragraphs left open close each other, and list items each other: no depth at all.
    expect(() => scanMarkup("<p>a".repeat(10_000) + "<li>b".repeat(10_000), {})).not.toThrow();
  });

  it.each([
    ["unclosed quotes", "<a href='x".repeat(100_000)],
    ["unclosed tags", "<p x=1 ".repeat(100_000)],
    ["raw text never closed", "<script>".repeat(100_000)],
    ["comments never closed", "<!--".repeat(100_000)],
    ["end tags of nothing open", "</span>".repeat(100_000)],
  ])("takes linear time on hostile markup: %s", (_, hostile) => {
    const started = performance.now();
    readHtml(hostile);
    try {
      scanMarkup(hostile, {}, { xml: true });
    } catch (error) {
      expect(error).toBeInstanceOf(MarkupTooDeepError); // as XML, each "<script>" opens an element
    }
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("readHtml", () => {
  it("keeps a block's blank lines and no-break spaces in its element, and folds them in the text, but a pre's text, kept in both as written", () => {
    const { text, elements } = readHtml("<p>a  b\n\n  c</p><pre>\n  a  b\n\n  c\n</pre><ul><li>x&nbsp;y</li></ul>");
    expect(elements).toEqual([
      { type: "NarrativeText", text: "a b c" },
      { type: "CodeSnippet", text: "  a  b\n\n  c" },
      { type: "ListItem", text: "x\u00a0y" },
    ]);
    expect(text).toBe("a b\nc\n  a  b\n\n  c\nx y");
  });

  it("gives the same text and elements in one pass as read apart, implied end tags included", () => {
    const page = "<h1>Report</h1><p>First<p>Second &amp; last<ul><li>one<li>two</ul><table><tr><th>k<th>v<tr><td>a<td>1</table>";
    const { text, elements } = readHtml(page);
    expect(text).toBe("Report\nFirst\nSecond & last\none\ntwo\nk v\na 1");
    expect(elements).toEqual(htmlElements(page));
    expect(elements.map((element) => [element.type, element.text])).toEqual([
      ["Title", "Report"],
      ["NarrativeText", "First"],
      ["NarrativeText", "Second & last"],
      ["ListItem", "one"],
      ["ListItem", "two"],
      ["Table", "k\tv\na\t1"],
    ]);
  });
});
