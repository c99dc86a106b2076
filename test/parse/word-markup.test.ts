import { describe, expect, it } from "vitest";
import { scanWord, WordTags } from "../../src/documents/parse/elements/word-markup.ts";

/** What scanWord reports for `xml`, as a list of events. */
function events(xml: string, names: string[]): string[] {
  const seen: string[] = [];
  scanWord(xml, new WordTags(names), {
    onopentag: (name, attributes) =>
      seen.push(
        `<${name}${Object.entries(attributes.all())
          .map(([key, value]) => ` ${key}=${value}`)
          .join("")}>`,
      ),
    onclosetag: (name) => seen.push(`</${name}>`),
    ontext: (text) => seen.push(text),
  });
  return seen;
}

describe("scanWord", () => {
  it("reports the tags asked for and the text of runs, decoded, and skips every other tag", () => {
    const xml =
      '<?xml version="1.0"?><w:body><w:p w:rsidR="00A1"><w:pPr><w:pStyle w:val="Heading&amp;1"/></w:pPr>'
      + '<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">Tom &amp; Jerry </w:t></w:r><w:proofErr w:type="spellStart"/>'
      + "<w:r><w:t>&#233;t&#xE9;</w:t></w:r></w:p><w:p/></w:body>";
    expect(events(xml, ["w:p", "w:pPr", "w:pStyle", "w:t"])).toEqual([
      "<w:p w:rsidR=00A1>",
      "<w:pPr>",
      "<w:pStyle w:val=Heading&1>",
      "</w:pStyle>",
      "</w:pPr>",
      "<w:t xml:space=preserve>",
      "Tom & Jerry ",
      "</w:t>",
      "<w:t>",
      "été",
      "</w:t>",
      "</w:p>",
      "<w:p>",
      "</w:p>",
    ]);
  });

  it("reads no text outside runs, and none of what an mc:Fallback holds, however nested", () => {
    const xml =
      "<w:p>stray<w:r><mc:AlternateContent><mc:Choice><w:t>boxed</w:t></mc:Choice>"
      + "<mc:Fallback><w:p><w:t>copy</w:t><mc:Fallback><w:t>deeper</w:t></mc:Fallback><w:t>copy again</w:t></w:p></mc:Fallback>"
      + "<mc:Fallback/></mc:AlternateContent><w:t>after</w:t></w:r></w:p>";
    expect(events(xml, ["w:p"])).toEqual(["<w:p>", "boxed", "after", "</w:p>"]);
  });

  it("skips comments and processing instructions, and reads CDATA in a run as literal text", () => {
    const xml = "<w:t>a<!-- <w:t>not text</w:t> -->b<?mso-application progid?><![CDATA[<c> &amp;]]></w:t><!-- unclosed <w:t>lost";
    expect(events(xml, ["w:t"])).toEqual(["<w:t>", "a", "b", "<c> &amp;", "</w:t>"]);
  });

  it("tells a wanted name from one it starts, one that starts it, or one in other letters, and ends at a tag left open", () => {
    expect(events("<w:TC>x</w:TC><w:tc>y</w:tc><w:tc", ["w:tc"])).toEqual(["<w:tc>", "</w:tc>"]);
    // "w:tb" starts "w:tbl", "w:tblPr" starts with it; names asked for together share their first letters.
    expect(events("<w:tb/><w:tbl/><w:tblPr/><w:tr/><w:headerReference/><wé:tbl/><w:tbl\n/>", ["w:tbl", "w:tr", "w:headerReference"])).toEqual([
      "<w:tbl>",
      "</w:tbl>",
      "<w:tr>",
      "</w:tr>",
      "<w:headerReference>",
      "</w:headerReference>",
      "<w:tbl>",
      "</w:tbl>",
    ]);
    // A skipped tag ends where it ends: its quoted values are read as values, and a name's own "=" and quote are not one.
    expect(events('<w:pX a="<w:p>"/><w:p>', ["w:p"])).toEqual(["<w:p>"]);
    expect(events('<x="x><w:tbl/></w:p="><w:tbl>', ["w:tbl"])).toEqual(["<w:tbl>", "</w:tbl>", "<w:tbl>"]);
  });

  it("reads a quoted value holding > or /> as part of its tag, and a < that starts no tag as text", () => {
    const xml = '<w:p><w:pStyle w:x="1>2" w:val="Heading2"/><w:t w:a="x/>">hello</w:t><w:t>a < b <> c</w:t></w:p>';
    expect(events(xml, ["w:p", "w:pStyle"])).toEqual([
      "<w:p>",
      "<w:pStyle w:x=1>2 w:val=Heading2>",
      "</w:pStyle>",
      "hello",
      "a ",
      "<",
      " b ",
      "<",
      "> c",
      "</w:p>",
    ]);
    // The run ended where its end tag is: text after it is not read.
    expect(events("<w:t>a < b</w:t><w:instrText>PAGE</w:instrText>", [])).toEqual(["a ", "<", " b"]);
  });
});
