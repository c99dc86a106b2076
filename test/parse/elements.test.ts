import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import type { Element } from "../../src/documents/parse/elements/element.ts";
import { type ParseOutput, parseDocument } from "../../src/documents/parse/parse-document.ts";
import { MAX_RULES_PER_PAGE } from "../../src/documents/parse/elements/pdf-rules.ts";
import { docxOfBody, pdfOf, placedTextPdf } from "./samples.ts";

const utf8 = (text: string) => Buffer.from(text, "utf8");

/** The words of a text, for comparing what the elements hold with the step's text. */
function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** Every word of `text` is in some element (elements may hold more: headers, alt texts, cells' numbers). */
function expectElementsHoldTheText(output: ParseOutput): void {
  const held = words((output.elements ?? []).map((element) => element.text).join(" "));
  expect([...words(output.text ?? "")].filter((word) => !held.has(word))).toEqual([]);
}

const withoutBoxes = (elements: Element[] | undefined) => (elements ?? []).map(({ bbox: _bbox, ...rest }) => rest);

describe("PDF layout", () => {
  // Page 1 draws its right column before its left one; both pages carry a running header and a page number.
  const header = { x: 72, y: 760, size: 9, text: "ACME Corp confidential" };
  const pdf = placedTextPdf([
    [
      header,
      { x: 330, y: 660, size: 10, text: "The right column is drawn first, yet" },
      { x: 330, y: 648, size: 10, text: "it is read after the whole left one." },
      { x: 72, y: 700, size: 24, text: "Annual Report" },
      { x: 72, y: 660, size: 10, text: "The left column starts the story and" },
      { x: 72, y: 648, size: 10, text: "goes on for a second line of text." },
      { x: 300, y: 40, size: 9, text: "1" },
    ],
    [
      header,
      { x: 72, y: 700, size: 16, text: "Details" },
      { x: 72, y: 670, size: 10, text: "- First item" },
      { x: 72, y: 656, size: 10, text: "- Second item" },
      { x: 72, y: 620, size: 10, text: "Fruit" },
      { x: 200, y: 620, size: 10, text: "Count" },
      { x: 300, y: 620, size: 10, text: "Price" },
      { x: 72, y: 606, size: 10, text: "Apple" },
      { x: 200, y: 606, size: 10, text: "3" },
      { x: 300, y: 606, size: 10, text: "1.20" },
      { x: 72, y: 592, size: 10, text: "Pear" },
      { x: 200, y: 592, size: 10, text: "5" },
      { x: 300, y: 592, size: 10, text: "0.80" },
      { x: 300, y: 40, size: 9, text: "2" },
    ],
  ]);

  it("reads columns in order, titles by size, lists, tables, and repeated headers and page numbers as furniture", async () => {
    const output = await parseDocument("pdf", pdf);
    const rows = [
      ["Fruit", "Count", "Price"],
      ["Apple", "3", "1.20"],
      ["Pear", "5", "0.80"],
    ];
    expect(withoutBoxes(output.elements)).toEqual([
      { type: "Header", text: "ACME Corp confidential", page: 1 },
      { type: "Title", text: "Annual Report", level: 1, page: 1 },
      { type: "NarrativeText", text: "The left column starts the story and goes on for a second line of text.", page: 1 },
      { type: "NarrativeText", text: "The right column is drawn first, yet it is read after the whole left one.", page: 1 },
      { type: "PageNumber", text: "1", page: 1 },
      { type: "Header", text: "ACME Corp confidential", page: 2 },
      { type: "Title", text: "Details", level: 2, page: 2 },
      { type: "ListItem", text: "First item", page: 2 },
      { type: "ListItem", text: "Second item", page: 2 },
      {
        type: "Table",
        text: "Fruit\tCount\tPrice\nApple\t3\t1.20\nPear\t5\t0.80",
        page: 2,
        table: {
          rows,
          html: "<table><tr><th>Fruit</th><th>Count</th><th>Price</th></tr><tr><td>Apple</td><td>3</td><td>1.20</td></tr><tr><td>Pear</td><td>5</td><td>0.80</td></tr></table>",
        },
      },
      { type: "PageNumber", text: "2", page: 2 },
    ]);
    expect(output.pages?.map(({ page, width, height }) => ({ page, width, height }))).toEqual([
      { page: 1, width: 612, height: 792 },
      { page: 2, width: 612, height: 792 },
    ]);
    expectElementsHoldTheText(output);
  });

  it("gives every element a box within its page, from the top-left, in points", async () => {
    const { elements = [] } = await parseDocument("pdf", pdf);
    const title = elements.find((element) => element.text === "Annual Report")!;
    // Baseline 700 from the bottom of a 792-point page, 24 points tall.
    expect(title.bbox).toEqual([72, 68, expect.closeTo(72 + 150, -1), 92]);
    for (const { bbox } of elements) {
      const [x0, y0, x1, y1] = bbox!;
      expect(0 <= x0 && x0 < x1 && x1 <= 612 && 0 <= y0 && y0 < y1 && y1 <= 792).toBe(true);
    }
  });

  it("reads a label turned up the margin as one element of its own, and keeps it out of the lines it crosses", async () => {
    // An arXiv identifier up the left margin, a word per run, beside two lines of body text.
    const label = ["arXiv:2101.00001v1", "[cs.CL]", "1", "Jan", "2021"];
    let along = 300;
    const turned = label.map((word) => {
      const run = { x: 30, y: along, size: 14, text: word, angle: 90 };
      along += word.length * 14 * 0.5 + 3;
      return run;
    });
    const body = [
      { x: 72, y: 400, size: 10, text: "The first line of the body runs across the page and goes on" },
      { x: 72, y: 388, size: 10, text: "to a second line that ends the paragraph." },
    ];
    const { elements = [], pages = [] } = await parseDocument("pdf", placedTextPdf([[...body.slice(0, 1), ...turned, ...body.slice(1)]]), { ocr: "never" });
    expect(withoutBoxes(elements)).toEqual([
      { type: "NarrativeText", text: "The first line of the body runs across the page and goes on to a second line that ends the paragraph.", page: 1 },
      { type: "UncategorizedText", text: "arXiv:2101.00001v1 [cs.CL] 1 Jan 2021", page: 1 },
    ]);
    // Up the margin: narrow, tall, left of the body, over the label's run of the page.
    const [x0, y0, x1, y1] = elements[1]!.bbox!;
    expect(x0).toBeGreaterThan(10);
    expect(x1).toBeLessThan(40);
    expect(y1 - y0).toBeGreaterThan(200);
    expect(y1).toBeCloseTo(792 - 300, 0);
    // The page's text keeps every word.
    for (const word of label) expect(pages[0]!.text).toContain(word);
  });

  it("reads short bold lines at the body's size as titles a level below the sized ones, and keeps them out of the paragraph after them", async () => {
    const body = (y: number, text: string) => ({ x: 72, y, size: 10, text });
    const boldPdf = placedTextPdf([
      [
        { x: 72, y: 720, size: 16, text: "Service agreement" },
        body(690, "This agreement is made between the parties named below."),
        { ...body(660, "Payment terms"), bold: true },
        body(646, "Invoices are paid within thirty days of receipt."),
        { ...body(616, "Late payment is charged at two percent a month."), bold: true },
        { ...body(590, "- Bold bullet"), bold: true },
        { ...body(570, "o Bold bullet"), bold: true },
      ],
    ]);
    const { elements } = await parseDocument("pdf", boldPdf, { ocr: "never" });
    expect(withoutBoxes(elements)).toEqual([
      { type: "Title", text: "Service agreement", level: 1, page: 1 },
      { type: "NarrativeText", text: "This agreement is made between the parties named below.", page: 1 },
      { type: "Title", text: "Payment terms", level: 2, page: 1 },
      { type: "NarrativeText", text: "Invoices are paid within thirty days of receipt.", page: 1 },
      { type: "NarrativeText", text: "Late payment is charged at two percent a month.", page: 1 },
      { type: "ListItem", text: "Bold bullet", page: 1 },
      { type: "ListItem", text: "Bold bullet", page: 1 },
    ]);
  });

  it("ends a paragraph at a line that stopped short with room for the next word: an invoice's lines stay apart, wrapped lines join", async () => {
    const line = (y: number, text: string) => ({ x: 50, y, size: 10, text });
    const invoice = placedTextPdf([
      [
        line(760, "ACME Supplies GmbH, Hauptstrasse 1, Berlin"),
        line(744, "Invoice number: INV-2026-0042"),
        line(728, "Invoice date: 3 Nov 2026"),
        line(712, "Total: EUR 1.334,56"),
        line(680, "Payment is due within thirty days of the invoice date, unless the"),
        line(666, "customer has agreed other terms with us in writing before the order was"),
        line(652, "placed. Thank you."),
      ],
    ]);
    const { elements } = await parseDocument("pdf", invoice, { ocr: "never" });
    expect(elements?.map((element) => element.text)).toEqual([
      "ACME Supplies GmbH, Hauptstrasse 1, Berlin",
      "Invoice number: INV-2026-0042",
      "Invoice date: 3 Nov 2026",
      "Total: EUR 1.334,56",
      "Payment is due within thirty days of the invoice date, unless the customer has agreed other terms with us in writing before the order was placed. Thank you.",
    ]);
  });

  it("keeps a paragraph whole when one of its lines happens to be all bold", async () => {
    const wrapped = placedTextPdf([
      [
        { x: 72, y: 700, size: 10, text: "The buyer accepts the goods on delivery and agrees to the" },
        { x: 72, y: 688, size: 10, text: "Standard Terms and Conditions of Sale", bold: true },
        { x: 72, y: 676, size: 10, text: "which are printed overleaf and form part of this contract." },
      ],
    ]);
    const { elements } = await parseDocument("pdf", wrapped, { ocr: "never" });
    expect(withoutBoxes(elements)).toEqual([
      {
        type: "NarrativeText",
        text: "The buyer accepts the goods on delivery and agrees to the Standard Terms and Conditions of Sale which are printed overleaf and form part of this contract.",
        page: 1,
      },
    ]);
  });

  it("takes no bold cells of a table's total row for titles (a number is no heading)", async () => {
    // Placed as camelot's us-025.pdf (page 2) sets its table: right-aligned numbers, a bold total row set a little left.
    const row = (y: number, cells: [number, string][], bold = false) => cells.map(([x, text]) => ({ x, y, size: 8, text, bold }));
    const totals = placedTextPdf([
      [
        {
          x: 45,
          y: 700,
          size: 8,
          text: "Table 1. Number of deaths and age-adjusted death rates for coronary heart disease, by ethnicity, United States, 2006.",
        },
        ...row(576, [
          [51, "Hispanic"],
          [205.7, "20,939"],
          [259.3, "106.4"],
          [313.6, "(104.9-107.8)"],
        ]),
        ...row(565, [
          [51.1, "Non-Hispanic"],
          [201.6, "403,588"],
          [259.3, "136.8"],
          [313.6, "(136.4-137.3)"],
        ]),
        ...row(
          552,
          [
            [45, "Total"],
            [200.2, "425,425"],
            [258.5, "135.0"],
            [312.1, "(134.6-135.4)"],
          ],
          true,
        ),
        { x: 45, y: 530, size: 8, text: "Abbreviation: CI = confidence interval. Rates are per 100,000 U.S. standard population." },
      ],
    ]);
    const { elements } = await parseDocument("pdf", totals, { ocr: "never" });
    // Now: Title "Total", Title "425,425", Title "135.0".
    expect(elements?.filter((element) => element.type === "Title").map((element) => element.text)).toEqual([]);
  });

  it("takes no bold line for a title when the body itself is set in bold", async () => {
    const allBold = placedTextPdf([
      [
        { x: 72, y: 700, size: 10, text: "Notice", bold: true },
        { x: 72, y: 670, size: 10, text: "The whole of this notice is printed in bold type, as some forms are.", bold: true },
      ],
    ]);
    const { elements } = await parseDocument("pdf", allBold, { ocr: "never" });
    expect(elements?.map((element) => element.type)).toEqual(["NarrativeText", "NarrativeText"]);
  });

  describe("tables drawn with ruling lines (ruling_lines)", () => {
    const cellText = (x: number, y: number, text: string, bold = false) => ({ x, y, size: 10, text, bold });
    const runs = [
      { x: 72, y: 740, size: 16, text: "Contract summary" },
      { x: 72, y: 700, size: 10, text: "The parties agree to the terms below." },
      cellText(78, 662, "Term", true),
      cellText(256, 662, "Meaning", true),
      cellText(78, 634, "Notice period"),
      cellText(256, 634, "Three months notice, given in writing and sent by post"),
      cellText(256, 620, "to the other party at its registered address"),
      cellText(78, 592, "Governing law"),
      cellText(256, 592, "The laws of England and Wales"),
      { x: 72, y: 550, size: 10, text: "Signed by both parties on the date above." },
      // Inside a box, but a box is not a table.
      { x: 80, y: 470, size: 10, text: "A framed remark stays a paragraph." },
    ];
    // The grid: an outer border, two row rules and a column rule, stroked in a moved coordinate system; a box around the remark.
    const grid = "q 1 0 0 1 72 580 cm 0.5 w 0 0 468 100 re S 0 70 m 468 70 l S 0 30 m 468 30 l S 178 0 m 178 100 l S Q 66 455 300 30 re S";
    const rows = [
      ["Term", "Meaning"],
      ["Notice period", "Three months notice, given in writing and sent by post to the other party at its registered address"],
      ["Governing law", "The laws of England and Wales"],
    ];

    it("reads a ruled table's cells from its lines, wrapped cells whole, in reading order between the text around it", async () => {
      const { elements } = await parseDocument("pdf", placedTextPdf([runs], [grid]), { ocr: "never", rulingLines: true });
      expect(elements).toEqual([
        { type: "Title", text: "Contract summary", level: 1, page: 1, bbox: expect.any(Array) },
        { type: "NarrativeText", text: "The parties agree to the terms below.", page: 1, bbox: expect.any(Array) },
        {
          type: "Table",
          text: rows.map((row) => row.join("\t")).join("\n"),
          page: 1,
          // The frame from the top-left: 792 - 680 = 112 to 792 - 580 = 212.
          bbox: [72, 112, 540, 212],
          table: { rows, html: expect.stringContaining("<td>Notice period</td>") },
        },
        { type: "NarrativeText", text: "Signed by both parties on the date above.", page: 1, bbox: expect.any(Array) },
        { type: "NarrativeText", text: "A framed remark stays a paragraph.", page: 1, bbox: expect.any(Array) },
      ]);
    });

    it("reads borders drawn as thin filled rectangles, and a table with no side borders", async () => {
      // Full-width row rules as 0.6-point filled bars, one inner column rule and one at the right edge: no left border.
      const bars = "72 679.7 468 0.6 re f 72 649.7 468 0.6 re f 72 609.7 468 0.6 re f 72 579.7 468 0.6 re f 249.7 580 0.6 100 re f 539.7 580 0.6 100 re f";
      const { elements } = await parseDocument("pdf", placedTextPdf([runs], [bars]), { ocr: "never", rulingLines: true });
      expect(elements?.find((element) => element.type === "Table")?.table?.rows).toEqual(rows);
    });

    it("is off unless asked for: the wrapped cell's lines are not one cell", async () => {
      const { elements } = await parseDocument("pdf", placedTextPdf([runs], [grid]), { ocr: "never" });
      expect(elements?.some((element) => element.table?.rows.some((row) => row.includes(rows[1]![1]!)))).toBe(false);
      expect(elements?.map((element) => element.text)).toContain("The parties agree to the terms below.");
    });

    it("looks for no grid on a page drawing more than MAX_RULES_PER_PAGE lines (a chart), in linear time", async () => {
      // The same grid, then short strokes past the limit under the table.
      const strokes = Array.from(
        { length: MAX_RULES_PER_PAGE },
        (_, index) => `${72 + (index % 400)} ${100 + Math.floor(index / 400) * 10} m ${73 + (index % 400)} ${100 + Math.floor(index / 400) * 10} l S`,
      );
      const started = performance.now();
      const { elements } = await parseDocument("pdf", placedTextPdf([runs], [`${grid}\n${strokes.join("\n")}`]), { ocr: "never", rulingLines: true });
      expect(performance.now() - started).toBeLessThan(3000);
      expect(elements?.some((element) => element.table?.rows.some((row) => row.includes(rows[1]![1]!)))).toBe(false);
    });

    it("reads a page whose drawing paints an empty path (a bare `S` or `f`, as some producers write)", async () => {
      // pdf.js gives such a paint a constructPath whose path data is [null].
      for (const paint of ["S", "f", "n"]) {
        const { elements } = await parseDocument("pdf", placedTextPdf([runs], [`${paint}\n${grid}`]), { ocr: "never", rulingLines: true });
        expect(elements?.find((element) => element.type === "Table")?.table?.rows).toEqual(rows);
      }
    });

    it("keeps a cell spanning two header rows whole (the rule between the header rows stops short of it)", async () => {
      // After camelot's tests (us-030.pdf page 2, data_lattice): "Cycle Name" fills both header rows of the
      // first column; "Percent Fuel Savings" spans the other two columns above "Speed" and "Idle".
      const spanned = placedTextPdf(
        [
          [
            cellText(78, 686, "Cycle"),
            cellText(78, 666, "Name"),
            cellText(210, 686, "Percent Fuel Savings"),
            cellText(210, 666, "Speed"),
            cellText(380, 666, "Idle"),
            cellText(78, 636, "2012_2"),
            cellText(210, 636, "5.9%"),
            cellText(380, 636, "17.4%"),
            cellText(78, 596, "2145_1"),
            cellText(210, 596, "2.4%"),
            cellText(380, 596, "2.7%"),
          ],
        ],
        ["0.5 w 72 580 468 120 re S 200 580 m 200 700 l S 370 580 m 370 680 l S 200 680 m 540 680 l S 72 660 m 540 660 l S 72 620 m 540 620 l S"],
      );
      const { elements } = await parseDocument("pdf", spanned, { ocr: "never", rulingLines: true });
      expect(elements?.find((element) => element.type === "Table")?.table?.rows).toEqual([
        ["Cycle Name", "Percent Fuel Savings", ""],
        ["", "Speed", "Idle"],
        ["2012_2", "5.9%", "17.4%"],
        ["2145_1", "2.4%", "2.7%"],
      ]);
    });

    it("keeps a table's body rows apart when only its header and columns are ruled", async () => {
      // As the Federal Register sets its tables (pdfplumber's federal-register-2020-17221.pdf, page 5): a frame,
      // column rules and a rule under the header; one line per body row, every column filled.
      const line = (y: number, cells: string[]) => cells.map((text, column) => cellText([78, 210, 380][column]!, y, text));
      const headerRuled = placedTextPdf(
        [
          [
            ...line(666, ["Action", "Hours", "Cost"]),
            ...line(645, ["Install software", "1", "$85"]),
            ...line(630, ["Revise manual", "2", "$170"]),
            ...line(615, ["Remove marker", "1", "$85"]),
            ...line(600, ["Total", "4", "$340"]),
          ],
        ],
        ["0.5 w 72 590 468 90 re S 200 590 m 200 680 l S 370 590 m 370 680 l S 72 658 m 540 658 l S"],
      );
      const { elements } = await parseDocument("pdf", headerRuled, { ocr: "never", rulingLines: true });
      expect(elements?.find((element) => element.type === "Table")?.table?.rows).toEqual([
        ["Action", "Hours", "Cost"],
        ["Install software", "1", "$85"],
        ["Revise manual", "2", "$170"],
        ["Remove marker", "1", "$85"],
        ["Total", "4", "$340"],
      ]);
    });

    it("takes no table from a bar chart: its gridlines, stroked bars and labels", async () => {
      // As camelot's us-028.pdf page 1 draws its chart (a 9 x 15 grid of mostly empty cells there).
      const bars = [
        [120, 40],
        [200, 90],
        [280, 60],
        [360, 130],
        [440, 20],
      ] as const;
      const chartRuns = [
        { x: 200, y: 720, size: 12, text: "Incidents by decade" },
        ...bars.map(([x, height]) => cellText(x + 2, 424 + height, String(height))),
        ...bars.map(([x], index) => cellText(x, 388, `${1960 + index * 10}s`)),
        cellText(420, 545, "Incidents"),
      ];
      const chart = [
        "0.5 w 100 400 400 160 re S",
        ...[440, 480, 520].map((y) => `100 ${y} m 500 ${y} l S`),
        ...bars.map(([x, height]) => `${x} 400 30 ${20 + height} re S`),
      ].join(" ");
      const { elements } = await parseDocument("pdf", placedTextPdf([chartRuns], [chart]), { ocr: "never", rulingLines: true });
      expect(elements?.filter((element) => element.type === "Table")).toEqual([]);
    });

    it("keeps a table whole when its header is set off by a border drawn as two stacked bars", async () => {
      // As camelot's eu-025.pdf (pages 2 and 3) draws its borders: 1.5-point filled bars, two stacked for a
      // 3-point border, and each section's column rules as bars ending at the border's near edge.
      const bar = (x: number, y0: number, y1: number) => `${x - 0.75} ${y0} 1.5 ${y1 - y0} re f`;
      const border = (y: number) => `72 ${y} 468 1.5 re f 72 ${y + 1.5} 468 1.5 re f`;
      const columns = [72, 250, 390, 540];
      const stacked = [
        border(677),
        ...columns.map((x) => bar(x, 651, 677)),
        border(648),
        ...columns.map((x) => bar(x, 580, 648)),
        "72 612 468 1 re f",
        border(577),
      ];
      const illnesses = [
        cellText(78, 660, "Illness"),
        cellText(260, 660, "Male"),
        cellText(400, 660, "Female"),
        cellText(78, 630, "Allergy"),
        cellText(260, 630, "25"),
        cellText(400, 630, "68"),
        cellText(78, 595, "Asthma"),
        cellText(260, 595, "6"),
        cellText(400, 595, "25"),
      ];
      const { elements } = await parseDocument("pdf", placedTextPdf([illnesses], [stacked.join(" ")]), { ocr: "never", rulingLines: true });
      expect(withoutBoxes(elements).map(({ type, table }) => ({ type, rows: table?.rows }))).toEqual([
        {
          type: "Table",
          rows: [
            ["Illness", "Male", "Female"],
            ["Allergy", "25", "68"],
            ["Asthma", "6", "25"],
          ],
        },
      ]);
    });

    it("reads a ruled table on a page turned by /Rotate as it is seen, not transposed", async () => {
      // A /Rotate 90 page (as pdfplumber's senate-expenditures.pdf and issue-140-example.pdf): seen upright, the
      // page's X runs along user space's y and its Y (downwards) along user space's x.
      const seen = (X: number, Y: number, text: string) => `BT /F1 10 Tf 0 1 -1 0 ${Y} ${X} Tm (${text}) Tj ET`;
      const content = [
        "0.5 w",
        ...[100, 130, 160, 190].map((Y) => `${Y} 100 m ${Y} 450 l S`),
        ...[100, 300, 450].map((X) => `100 ${X} m 190 ${X} l S`),
        seen(106, 122, "Name"),
        seen(306, 122, "Qty"),
        seen(106, 152, "Apples"),
        seen(306, 152, "4"),
        seen(106, 182, "Pears"),
        seen(306, 182, "7"),
      ].join("\n");
      const rotated = pdfOf(
        [
          "<< /Type /Catalog /Pages 2 0 R >>",
          "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
          "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
          "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate 90 /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>",
          `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
        ],
        "/Root 1 0 R",
      );
      const { elements } = await parseDocument("pdf", rotated, { ocr: "never", rulingLines: true });
      expect(withoutBoxes(elements).map(({ type, table }) => ({ type, rows: table?.rows }))).toEqual([
        {
          type: "Table",
          rows: [
            ["Name", "Qty"],
            ["Apples", "4"],
            ["Pears", "7"],
          ],
        },
      ]);
    });
  });

  it("writes Markdown without the page furniture", async () => {
    const { markdown } = await parseDocument("pdf", pdf);
    expect(markdown).toBe(
      [
        "# Annual Report",
        "The left column starts the story and goes on for a second line of text.",
        "The right column is drawn first, yet it is read after the whole left one.",
        "## Details",
        "- First item\n- Second item",
        "| Fruit | Count | Price |\n| --- | --- | --- |\n| Apple | 3 | 1.20 |\n| Pear | 5 | 0.80 |",
      ].join("\n\n"),
    );
  });
});

const WORD_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';

/** A DOCX with styles, a header and a footer beside `body`. */
function styledDocx(body: string): Buffer {
  const styles =
    `<w:styles ${WORD_NS}>`
    + '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
    + '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>'
    + '<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>'
    + '<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/></w:style>'
    + "</w:styles>";
  const document = `<w:document ${WORD_NS}><w:body>${body}</w:body></w:document>`;
  return Buffer.from(
    zipSync({
      "[Content_Types].xml": strToU8("<Types/>"),
      "word/document.xml": strToU8(document),
      "word/styles.xml": strToU8(styles),
      "word/header1.xml": strToU8(`<w:hdr ${WORD_NS}><w:p><w:r><w:t>Quarterly memo</w:t></w:r></w:p></w:hdr>`),
      "word/footer1.xml": strToU8(`<w:ftr ${WORD_NS}><w:p><w:r><w:t>Page 3</w:t></w:r></w:p></w:ftr>`),
      "word/footer2.xml": strToU8(`<w:ftr ${WORD_NS}><w:p><w:r><w:t>Internal use</w:t></w:r></w:p></w:ftr>`),
    }),
  );
}

const paragraph = (text: string, properties = "") => `<w:p>${properties === "" ? "" : `<w:pPr>${properties}</w:pPr>`}<w:r><w:t>${text}</w:t></w:r></w:p>`;
const cell = (text: string) => `<w:tc>${paragraph(text)}</w:tc>`;

describe("DOCX elements", () => {
  it("types headings by style and outline level, numbered and styled lists, tables, headers and footers", async () => {
    const body =
      paragraph("Overview", '<w:pStyle w:val="Heading1"/>')
      + paragraph("Sales grew in every region.")
      + paragraph("Regions", '<w:pStyle w:val="Heading2"/>')
      + paragraph("North", '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="4"/></w:numPr>')
      + paragraph("South", '<w:pStyle w:val="ListBullet"/>')
      + paragraph("Appendix", '<w:pStyle w:val="Chapter"/>')
      + `<w:tbl><w:tr>${cell("Region")}${cell("Total")}</w:tr><w:tr>${cell("North")}${cell("12")}</w:tr></w:tbl>`;
    const output = await parseDocument("docx", styledDocx(body));
    expect(output.elements).toEqual([
      { type: "Header", text: "Quarterly memo" },
      { type: "Title", text: "Overview", level: 1 },
      { type: "NarrativeText", text: "Sales grew in every region." },
      { type: "Title", text: "Regions", level: 2 },
      { type: "ListItem", text: "North" },
      { type: "ListItem", text: "South" },
      { type: "Title", text: "Appendix", level: 3 },
      {
        type: "Table",
        text: "Region\tTotal\nNorth\t12",
        table: {
          rows: [
            ["Region", "Total"],
            ["North", "12"],
          ],
          html: "<table><tr><th>Region</th><th>Total</th></tr><tr><td>North</td><td>12</td></tr></table>",
        },
      },
      { type: "PageNumber", text: "Page 3" },
      { type: "Footer", text: "Internal use" },
    ]);
    expect(output.markdown).toBe(
      "# Overview\n\nSales grew in every region.\n\n## Regions\n\n- North\n- South\n\n### Appendix\n\n| Region | Total |\n| --- | --- |\n| North | 12 |",
    );
    expectElementsHoldTheText(output);
  });

  const raggedTable = (rows: number) =>
    `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>wide</w:t></w:r></w:p></w:tc>${"<w:tc/>".repeat(100_000)}</w:tr>${"<w:tr><w:tc><w:p><w:r><w:t>r</w:t></w:r></w:p></w:tc></w:tr>".repeat(rows)}</w:tbl>`;
  it.each<[string, string, (output: ParseOutput) => void]>([
    // Markdown escaping ran `^\s*` from each line's start over all the line breaks after it.
    [
      "200,000 line breaks before a line that needs escaping",
      `<w:p><w:r><w:t>x</w:t>${"<w:br/>".repeat(200_000)}<w:t># y</w:t></w:r></w:p>`,
      (output) => expect(output.markdown?.endsWith("\n\\# y")).toBe(true),
    ],
    // A heading's line breaks were joined by `\s*\n\s*`, which rescans a run of spaces from each of its positions.
    [
      "a heading with a line break and 200,000 spaces",
      `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>a</w:t><w:br/><w:t xml:space="preserve">b${" ".repeat(200_000)}c</w:t></w:r></w:p>`,
      (output) => expect(output.markdown).toBe(`# a b${" ".repeat(200_000)}c`),
    ],
    // One row of 100,000 cells and 100,000 rows of one, padded: 10^10 cells. Too large for the output, it is dropped.
    ["a ragged table", raggedTable(100_000), (output) => expect(output).toMatchObject({ elements: [], truncated: true })],
  ])("reads %s in linear time", async (_, body, check) => {
    const started = performance.now();
    const output = await parseDocument("docx", docxOfBody(body));
    expect(performance.now() - started).toBeLessThan(3000);
    check(output);
  });

  it("drops a ragged table too large for the output whatever its rows, as it drops any element past the budget", async () => {
    for (const rows of [5, 20]) {
      const output = await parseDocument("docx", docxOfBody(`<w:p><w:r><w:t>Before the table.</w:t></w:r></w:p>${raggedTable(rows)}`));
      expect(output).toMatchObject({ elements: [{ type: "NarrativeText", text: "Before the table." }], truncated: true });
    }
  });
});

describe("HTML, Markdown, text and CSV elements", () => {
  it("HTML: headings by level, paragraphs, list items, tables, the page's header and footer; scripts skipped", async () => {
    const html =
      "<html><head><title>Guide page</title><script>var x = 1;</script></head><body>"
      + "<header><nav>Home | About</nav></header>"
      + "<h1>Guide</h1><p>Read this   first.</p><h3>Steps</h3><ul><li>Open</li><li>Close</li></ul>"
      + "<table><tr><th>Key</th><th>Value</th></tr><tr><td>a &amp; b</td><td>1</td></tr></table>"
      + "<pre>npm start</pre><footer>© 2026 Example</footer></body></html>";
    const output = await parseDocument("html", utf8(html), { contentType: "text/html" });
    expect(output.elements).toEqual([
      { type: "Title", text: "Guide page", level: 1 },
      { type: "Header", text: "Home | About" },
      { type: "Title", text: "Guide", level: 1 },
      { type: "NarrativeText", text: "Read this first." },
      { type: "Title", text: "Steps", level: 3 },
      { type: "ListItem", text: "Open" },
      { type: "ListItem", text: "Close" },
      {
        type: "Table",
        text: "Key\tValue\na & b\t1",
        table: {
          rows: [
            ["Key", "Value"],
            ["a & b", "1"],
          ],
          html: "<table><tr><th>Key</th><th>Value</th></tr><tr><td>a &amp; b</td><td>1</td></tr></table>",
        },
      },
      { type: "CodeSnippet", text: "npm start" },
      { type: "Footer", text: "© 2026 Example" },
    ]);
    expectElementsHoldTheText(output);
  });

  it("HTML nested past the depth a document has is read as its text, in linear time", async () => {
    const started = performance.now();
    const output = await parseDocument("html", utf8(`${"<div>".repeat(200_000)}deep words`), { contentType: "text/html" });
    expect(output.elements).toEqual([{ type: "Title", text: "deep words", level: 1 }]);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("Markdown: headings, paragraphs, nested lists, GFM tables and code, inline markup reduced to text", async () => {
    const markdown =
      "# Title\n\nSome **bold** and [a link](https://example.com).\n\n## Part\n\n- one\n  - nested\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode here\n```\n";
    const output = await parseDocument("md", utf8(markdown), { contentType: "text/markdown" });
    expect(output.elements).toEqual([
      { type: "Title", text: "Title", level: 1 },
      { type: "NarrativeText", text: "Some bold and a link." },
      { type: "Title", text: "Part", level: 2 },
      { type: "ListItem", text: "one" },
      { type: "ListItem", text: "nested" },
      { type: "ListItem", text: "two" },
      {
        type: "Table",
        text: "a\tb\n1\t2",
        table: {
          rows: [
            ["a", "b"],
            ["1", "2"],
          ],
          html: "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>",
        },
      },
      { type: "CodeSnippet", text: "code here" },
    ]);
    expect(output).toMatchObject({ format: "md", encoding: "utf-8", encodingSource: "default", truncated: false });
    expectElementsHoldTheText(output);
  });

  // marked padded every row to its header (n² cells), looked for each emphasis delimiter's closer to
  // the end of its block, and lexed each level of nesting again, recursively.
  const raggedTable = `${"|a".repeat(3000)}|\n${"|-".repeat(3000)}|\n${"a\n".repeat(3000)}`;
  it.each([
    ["a ragged table 3,000 columns wide, as plain text", raggedTable, [{ type: "NarrativeText", text: raggedTable.trim() }]],
    [
      "a block of 40,000 intraword underscores as it is written, the blocks around it as Markdown",
      `# Title\n\n**bold**\n\n${"a_".repeat(40_000)}\n\n*after*\n`,
      [
        { type: "Title", text: "Title", level: 1 },
        { type: "NarrativeText", text: "bold" },
        { type: "NarrativeText", text: "a_".repeat(40_000) },
        { type: "NarrativeText", text: "after" },
      ],
    ],
    ["a block of 60,000 unmatched asterisks as it is written", "*a".repeat(60_000), [{ type: "NarrativeText", text: "*a".repeat(60_000) }]],
    ["2,500 nested blockquotes as plain text", `${">".repeat(2500)} a`, [{ type: "NarrativeText", text: `${">".repeat(2500)} a` }]],
    [
      "a list nested 1,000 deep as plain text",
      Array.from({ length: 1000 }, (_, line) => `${" ".repeat(2 * line)}- a`).join("\n"),
      Array.from({ length: 1000 }, () => ({ type: "ListItem", text: "a" })),
    ],
  ])("Markdown: reads %s, in linear time", async (_, markdown, elements) => {
    const started = performance.now();
    const output = await parseDocument("md", utf8(markdown), { contentType: "text/markdown" });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(output.elements).toEqual(elements);
  });

  it("Markdown: the table bound counts a table's rows to the next block, and no delimiter row in a code fence", async () => {
    // 50 sections of a heading and a 5-column table of 100 rows, no blank lines: 25,000 cells, not 50 x 5 x 5,000.
    const table = `| a | b | c | d | e |\n|---|---|---|---|---|\n${"| 1 | 2 | 3 | 4 | 5 |\n".repeat(100)}`;
    const report = Array.from({ length: 50 }, (_, index) => `## Section ${index}\n${table}`).join("");
    const output = await parseDocument("md", utf8(report), { contentType: "text/markdown" });
    expect(output.elements!.filter((element) => element.type === "Title")).toHaveLength(50);
    expect(output.elements!.filter((element) => element.type === "Table")).toHaveLength(50);
    const log = `# Log\n\n\`\`\`\n|-----|-----|\n${"a | b\n".repeat(30_000)}\`\`\`\n`;
    expect((await parseDocument("md", utf8(log), { contentType: "text/markdown" })).elements).toEqual([
      { type: "Title", text: "Log", level: 1 },
      { type: "CodeSnippet", text: `|-----|-----|\n${"a | b\n".repeat(30_000).trimEnd()}` },
    ]);
  });

  it("plain text: paragraphs at blank lines, titles, list items, an email address, text without letters", async () => {
    const text =
      "Meeting notes\n\nWe agreed on the plan and the budget.\nIt starts in May.\n\n- book rooms\n- send invites\n\n1) first\n2) second\n\nann@example.com\n\n2026-05-01";
    const output = await parseDocument("txt", utf8(text));
    expect(output.elements).toEqual([
      { type: "Title", text: "Meeting notes", level: 1 },
      { type: "NarrativeText", text: "We agreed on the plan and the budget.\nIt starts in May." },
      { type: "ListItem", text: "book rooms" },
      { type: "ListItem", text: "send invites" },
      { type: "ListItem", text: "1) first" },
      { type: "ListItem", text: "2) second" },
      { type: "EmailAddress", text: "ann@example.com" },
      { type: "UncategorizedText", text: "2026-05-01" },
    ]);
    expectElementsHoldTheText(output);
  });

  it("CSV: one table of its records, quoted commas and newlines kept in their cells", async () => {
    const output = await parseDocument("csv", utf8('name,note\nAnn,"likes, commas"\nBob,"two\nlines"\n'), { contentType: "text/csv" });
    expect(output.elements).toEqual([
      {
        type: "Table",
        text: "name\tnote\nAnn\tlikes, commas\nBob\ttwo\nlines",
        table: {
          rows: [
            ["name", "note"],
            ["Ann", "likes, commas"],
            ["Bob", "two\nlines"],
          ],
          html: "<table><tr><th>name</th><th>note</th></tr><tr><td>Ann</td><td>likes, commas</td></tr><tr><td>Bob</td><td>two\nlines</td></tr></table>",
        },
      },
    ]);
    expect(output.markdown).toBe("| name | note |\n| --- | --- |\n| Ann | likes, commas |\n| Bob | two lines |");
  });

  it("keeps at most 50,000 elements, whatever their text: a megabyte of one-letter list items is not a million elements", async () => {
    const output = await parseDocument("html", utf8(`<ul>${"<li>a</li>".repeat(200_000)}</ul>`), { contentType: "text/html" });
    expect(output.truncated).toBe(true);
    expect(output.elements).toHaveLength(50_000);
    expect(output.elements!.at(-1)).toEqual({ type: "ListItem", text: "a" });
    // The Markdown is of the kept elements; the text stays whole (it is within its own budget).
    expect(output.markdown!.split("\n")).toHaveLength(50_000);
    expect(output.text!.split("\n")).toHaveLength(200_000);
  });

  it("cuts elements past the text budget and says so", async () => {
    const paragraphs = Array.from({ length: 3000 }, (_, index) => `Paragraph ${index} ${"word ".repeat(100)}.`).join("\n\n");
    const output = await parseDocument("txt", utf8(paragraphs));
    expect(output.truncated).toBe(true);
    expect(output.elements!.length).toBeLessThan(3000);
    expect(output.elements!.length).toBeGreaterThan(1000);
    expect(Buffer.byteLength(output.markdown!, "utf8")).toBeLessThanOrEqual(1024 * 1024);
  });
});

const SPREADSHEET_ML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** A spreadsheet column's letters: 1 -> A, 27 -> AA. */
function columnName(column: number): string {
  let name = "";
  for (let left = column; left > 0; left = Math.floor((left - 1) / 26)) name = String.fromCharCode(65 + ((left - 1) % 26)) + name;
  return name;
}

describe("XLSX and PPTX elements", () => {
  it("XLSX: a Title per sheet and its used range as a Table, shared strings, numbers and booleans, the sheet's name and number", async () => {
    const sheet = (rows: string) => strToU8(`<worksheet xmlns="${SPREADSHEET_ML}"><sheetData>${rows}</sheetData></worksheet>`);
    const workbook = zipSync({
      "xl/workbook.xml": strToU8(
        `<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="Sales" sheetId="1" r:id="rId2"/><sheet name="Empty" sheetId="2" r:id="rId1"/></sheets></workbook>`,
      ),
      "xl/_rels/workbook.xml.rels": strToU8(
        '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Target="/xl/worksheets/sheet2.xml"/></Relationships>',
      ),
      "xl/sharedStrings.xml": strToU8(`<sst xmlns="${SPREADSHEET_ML}"><si><t>Item</t></si><si><t>Paid</t></si><si><t>Tea</t></si></sst>`),
      "xl/worksheets/sheet1.xml": sheet(""),
      "xl/worksheets/sheet2.xml": sheet(
        '<row r="2"><c r="B2" t="s"><v>0</v></c><c r="C2" t="s"><v>1</v></c></row>'
          + '<row r="3"><c r="B3" t="s"><v>2</v></c><c r="C3" t="b"><v>1</v></c><c r="D3"><v>4.5</v></c></row>',
      ),
    });
    const output = await parseDocument("xlsx", workbook);
    expect(output.elements).toEqual([
      { type: "Title", text: "Sales", level: 1, page: 1 },
      {
        type: "Table",
        text: "Item\tPaid\t\nTea\tTRUE\t4.5",
        page: 1,
        table: {
          rows: [
            ["Item", "Paid", ""],
            ["Tea", "TRUE", "4.5"],
          ],
          html: "<table><tr><th>Item</th><th>Paid</th><th></th></tr><tr><td>Tea</td><td>TRUE</td><td>4.5</td></tr></table>",
          sheet: "Sales",
        },
      },
      { type: "Title", text: "Empty", level: 1, page: 2 },
    ]);
    expectElementsHoldTheText(output);
  });

  it("XLSX: reads the shared strings part the workbook's relationships name, xl/sharedStrings.xml when none does", async () => {
    const workbook = (sharedStringsAt: string, target?: string) =>
      zipSync({
        "xl/workbook.xml": strToU8(
          `<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
        ),
        "xl/_rels/workbook.xml.rels": strToU8(
          `<Relationships><Relationship Id="rId1" Type="${RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/>${
            target === undefined ? "" : `<Relationship Id="rId2" Type="${RELATIONSHIPS}/sharedStrings" Target="${target}"/>`
          }</Relationships>`,
        ),
        [sharedStringsAt]: strToU8(`<sst xmlns="${SPREADSHEET_ML}"><si><t>Shared</t></si></sst>`),
        "xl/worksheets/sheet1.xml": strToU8(
          `<worksheet xmlns="${SPREADSHEET_ML}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>`,
        ),
      });
    const cells = async (bytes: Uint8Array) => (await parseDocument("xlsx", bytes)).elements?.find((element) => element.type === "Table")?.table?.rows;
    // Before: only xl/sharedStrings.xml was read, and a workbook keeping them elsewhere lost every string.
    expect(await cells(workbook("xl/strings/custom.xml", "strings/custom.xml"))).toEqual([["Shared"]]);
    expect(await cells(workbook("xl/sharedStrings.xml"))).toEqual([["Shared"]]);
  });

  it("XLSX: reads a worksheet the workbook's relationships keep outside xl/worksheets/, its inline strings in the text too", async () => {
    const workbook = zipSync({
      "xl/workbook.xml": strToU8(
        `<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="Moved" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      ),
      "xl/_rels/workbook.xml.rels": strToU8(
        `<Relationships><Relationship Id="rId1" Type="${RELATIONSHIPS}/worksheet" Target="sheets/first.xml"/></Relationships>`,
      ),
      "xl/sheets/first.xml": strToU8(
        `<worksheet xmlns="${SPREADSHEET_ML}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Inline</t></is></c><c r="B1"><v>7</v></c></row></sheetData></worksheet>`,
      ),
    });
    const output = await parseDocument("xlsx", workbook);
    // Before: only xl/worksheets/sheetN.xml were read, and this sheet was a name without a table.
    expect(output.elements?.find((element) => element.type === "Table")?.table?.rows).toEqual([["Inline", "7"]]);
    expect(output.text).toContain("Inline");
  });

  it("XLSX: a worksheet named by many sheets is read once, and a sparse sheet makes no full grid", async () => {
    const sheet = (rows: string) => strToU8(`<worksheet xmlns="${SPREADSHEET_ML}"><sheetData>${rows}</sheetData></worksheet>`);
    const row = (number: number) =>
      `<row r="${number}">${[1, 2, 3].map((column) => `<c r="${String.fromCharCode(64 + column)}${number}"><v>${number * column}</v></c>`).join("")}</row>`;
    const sheetList = Array.from({ length: 999 }, (_, index) => `<sheet name="S${index}" sheetId="${index + 1}" r:id="rId1"/>`).join("");
    // A cell on each row and column of a diagonal: 16,000 x 16,000 cells, were the range filled in.
    const diagonal = Array.from({ length: 16_000 }, (_, index) => `<row r="${index + 1}"><c r="${columnName(index + 1)}${index + 1}"><v>1</v></c></row>`).join(
      "",
    );
    const workbook = zipSync({
      "xl/workbook.xml": strToU8(
        `<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${RELATIONSHIPS}"><sheets>${sheetList}<sheet name="Diagonal" sheetId="1000" r:id="rId2"/></sheets></workbook>`,
      ),
      "xl/_rels/workbook.xml.rels": strToU8(
        '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Target="worksheets/sheet2.xml"/></Relationships>',
      ),
      "xl/worksheets/sheet1.xml": sheet(Array.from({ length: 5000 }, (_, index) => row(index + 1)).join("")),
      "xl/worksheets/sheet2.xml": sheet(diagonal),
    });
    const started = performance.now();
    const output = await parseDocument("xlsx", workbook);
    // Before: each of the 999 sheets read the part again (12 s for 125 of them), and the diagonal took 10 s and 1.6 GB.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(output.sheetCount).toBe(1000);
    expect(output.elements!.slice(0, 2)).toMatchObject([
      { type: "Title", text: "S0", page: 1 },
      { type: "Table", page: 1, table: { sheet: "S0" } },
    ]);
    // The sheets after the first name the part already read: they are listed in sheetNames, not read again.
    // The diagonal's table, over the output's budget, is dropped whole.
    expect(output.elements!.slice(2).map(({ type, text, page }) => ({ type, text, page }))).toEqual([{ type: "Title", text: "Diagonal", page: 1000 }]);
    expect(output.truncated).toBe(true);
  });

  it("PPTX: slide titles, body placeholders' bullets, text boxes and tables, by slide", async () => {
    const shape = (placeholder: string, paragraphs: string[]) =>
      `<p:sp><p:nvSpPr><p:nvPr>${placeholder}</p:nvPr></p:nvSpPr><p:txBody>${paragraphs.map((text) => `<a:p><a:r><a:t>${text}</a:t></a:r></a:p>`).join("")}</p:txBody></p:sp>`;
    const slide = (content: string) =>
      strToU8(
        `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree>${content}</p:spTree></p:cSld></p:sld>`,
      );
    const table =
      "<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Revenue</a:t></a:r></a:p></a:txBody></a:tc></a:tr>"
      + "<a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q1</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>10</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>";
    const presentation = zipSync({
      "ppt/presentation.xml": strToU8("<p:presentation/>"),
      "ppt/slides/slide1.xml": slide(shape('<p:ph type="ctrTitle"/>', ["Launch plan"]) + shape('<p:ph type="subTitle" idx="1"/>', ["Spring 2026"])),
      "ppt/slides/slide2.xml": slide(
        shape('<p:ph type="title"/>', ["Goals"]) + shape('<p:ph idx="1"/>', ["Grow sales", "Hire two people"]) + shape("", ["Note to self."]) + table,
      ),
    });
    const output = await parseDocument("pptx", presentation);
    expect(output.elements).toEqual([
      { type: "Title", text: "Launch plan", level: 1, page: 1 },
      { type: "Title", text: "Spring 2026", level: 2, page: 1 },
      { type: "Title", text: "Goals", level: 1, page: 2 },
      { type: "ListItem", text: "Grow sales", page: 2 },
      { type: "ListItem", text: "Hire two people", page: 2 },
      { type: "NarrativeText", text: "Note to self.", page: 2 },
      {
        type: "Table",
        text: "Q\tRevenue\nQ1\t10",
        page: 2,
        table: {
          rows: [
            ["Q", "Revenue"],
            ["Q1", "10"],
          ],
          html: "<table><tr><th>Q</th><th>Revenue</th></tr><tr><td>Q1</td><td>10</td></tr></table>",
        },
      },
    ]);
    expectElementsHoldTheText(output);
  });
});
