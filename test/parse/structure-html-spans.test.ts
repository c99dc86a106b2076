import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: cells spanning columns and rows", () => {
  it("keeps every cell under its column", async () => {
    const output = await parseDocument(
      "html",
      Buffer.from(
        "<table><tr><th rowspan=2>Region</th><th colspan=2>Sales</th><th rowspan=2>Manager</th></tr>"
          + "<tr><th>Q1</th><th>Q2</th></tr>"
          + "<tr><td>North</td><td>10</td><td>20</td><td>Ann</td></tr>"
          + "<tr><td rowspan=2>South</td><td>30</td><td>40</td><td>Bob</td></tr>"
          + "<tr><td>50</td><td>60</td><td>Cy</td></tr></table>",
      ),
    );
    const rows = output.elements?.find((element) => element.type === "Table")?.table?.rows ?? [];
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row).toHaveLength(4);
    // Today the second header row is ["Q1", "Q2", "", ""] and the last row ["50", "60", "Cy", ""]:
    // Q1 sits under Region, and South's second row puts 50 under Region and the manager under Q2.
    expect(rows[1]![1]).toBe("Q1");
    expect(rows[1]![2]).toBe("Q2");
    expect(rows[4]!.slice(1)).toEqual(["50", "60", "Cy"]);
    expect(rows[0]![3]).toBe("Manager");
  });

  it("caps spans: a colspan reaches at most the 1000th column, and hostile spans take neither time nor memory", async () => {
    const wide = await parseDocument("html", Buffer.from("<table><tr><td colspan=100000>x</td><td>y</td></tr><tr><td>a</td></tr></table>"));
    const rows = wide.elements?.find((element) => element.type === "Table")?.table?.rows ?? [];
    expect(rows[0]).toHaveLength(1001);
    expect(rows[0]!.slice(-2)).toEqual(["", "y"]);
    // Each row would cover 1000 columns for 100,000 rows: past a page's budget of spanned cells, spans read as one cell.
    const started = performance.now();
    const hostile = await parseDocument("html", Buffer.from(`<table>${"<tr><td colspan=100000 rowspan=100000>x".repeat(100_000)}</table>`));
    // The table, 1000 columns wide, passes the output's bound and is dropped whole, as any element past it.
    expect(hostile.text).toMatch(/^x\nx\n/);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
