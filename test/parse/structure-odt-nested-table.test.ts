import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { odt } from "../formats/fixtures.ts";

const cell = (content: string) => `<table:table-cell>${content}</table:table-cell>`;
const p = (text: string) => `<text:p>${text}</text:p>`;
const row = (...cells: string[]) => `<table:table-row>${cells.join("")}</table:table-row>`;

describe("ODT: a table nested in a table's cell", () => {
  it("keeps the outer table's rows", async () => {
    const inner = `<table:table>${row(cell(p("Size")), cell(p("10 cm")))}</table:table>`;
    const outer = `<table:table>${row(cell(p("Name")), cell(p("Details")))}${row(cell(p("Widget")), cell(inner))}${row(cell(p("Gadget")), cell(p("none")))}</table:table>`;
    const output = await parseDocument("odt", odt(outer));
    // Today the inner table replaces the outer one being read: the only Table is [["Size", "10 cm"]],
    // "Name", "Details" and "Widget" are gone from text and elements, and "Gadget" and "none" become Titles.
    const tables = (output.elements ?? []).filter((element) => element.type === "Table");
    expect(tables).toHaveLength(1);
    const rows = tables[0]!.table!.rows;
    expect(rows[0]).toEqual(["Name", "Details"]);
    expect(rows[1]![0]).toBe("Widget");
    expect(rows[1]![1]).toContain("10 cm");
    expect(rows[2]).toEqual(["Gadget", "none"]);
    expect(output.text).toContain("Widget");
  });
});
