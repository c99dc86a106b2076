import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

const SPREADSHEET_ML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

interface DatedWorkbook {
  /** Custom number formats: id -> format code (as it reads, escaped here). */
  numberFormats?: Record<number, string>;
  /** Each cell style's numFmtId, in `<cellXfs>` order (a cell's `s`); or the styles part's own `<cellXfs>` body. */
  cellStyles: number[] | string;
  date1904?: boolean;
  /** Column A, a cell a row: its value and, where given, its style and type. */
  cells: { value: string; style?: number; type?: string }[];
  /** Where the styles part is, and the Target its relationship gives (none: no relationship names it), an external one with `external`. */
  stylesAt?: { part: string; target?: string; external?: boolean };
}

const escapeXml = (text: string) => text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

/** An xlsx of one sheet, as Excel writes one: a styles part with custom number formats, cell styles (and named styles beside them). */
function datedWorkbook({ numberFormats = {}, cellStyles, date1904 = false, cells, stylesAt = { part: "xl/styles.xml" } }: DatedWorkbook): Uint8Array {
  const formats = Object.entries(numberFormats).map(([id, code]) => `<numFmt numFmtId="${id}" formatCode="${escapeXml(code)}"/>`);
  const xfs = typeof cellStyles === "string" ? cellStyles : cellStyles.map((id) => `<xf numFmtId="${id}" fontId="0" applyNumberFormat="1"/>`).join("");
  const rows = cells.map(({ value, style, type }, index) => {
    const attributes = `r="A${index + 1}"${style === undefined ? "" : ` s="${style}"`}${type === undefined ? "" : ` t="${type}"`}`;
    return `<row r="${index + 1}"><c ${attributes}><v>${value}</v></c></row>`;
  });
  return zipSync({
    "xl/workbook.xml": strToU8(
      `<workbook xmlns="${SPREADSHEET_ML}" xmlns:r="${RELATIONSHIPS}"><workbookPr${date1904 ? ' date1904="1"' : ""} defaultThemeVersion="124226"/>`
        + '<sheets><sheet name="Dates" sheetId="1" r:id="rId1"/></sheets></workbook>',
    ),
    "xl/_rels/workbook.xml.rels": strToU8(
      `<Relationships><Relationship Id="rId1" Type="${RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/>${
        stylesAt.target === undefined
          ? ""
          : `<Relationship Id="rId2" Type="${RELATIONSHIPS}/styles" Target="${stylesAt.target}"${stylesAt.external ? ' TargetMode="External"' : ""}/>`
      }</Relationships>`,
    ),
    [stylesAt.part]: strToU8(
      `<styleSheet xmlns="${SPREADSHEET_ML}"><numFmts count="${formats.length}">${formats.join("")}</numFmts>`
        + '<cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>'
        + `<cellXfs>${xfs}</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`,
    ),
    "xl/sharedStrings.xml": strToU8(`<sst xmlns="${SPREADSHEET_ML}"><si><t>45306</t></si></sst>`),
    "xl/worksheets/sheet1.xml": strToU8(`<worksheet xmlns="${SPREADSHEET_ML}"><sheetData>${rows.join("")}</sheetData></worksheet>`),
  });
}

/** Column A of the workbook's one table, as parse writes it. */
async function columnA(workbook: DatedWorkbook): Promise<string[]> {
  const output = await parseDocument("xlsx", datedWorkbook(workbook));
  const table = output.elements?.find((element) => element.type === "Table");
  return (table?.table?.rows ?? []).map((row) => row[0]!);
}

describe("XLSX: a number whose cell style has a date or time format is a date", () => {
  it("writes built-in date, time and date-time formats' cells as ISO 8601, seconds rounded", async () => {
    // Styles: 0 General, 1 m/d/yyyy (14), 2 h:mm:ss (21), 3 m/d/yy h:mm (22), 4 0.00 (2), 5 h:mm AM/PM (18), 6 mm:ss (45).
    const cellStyles = [0, 14, 21, 22, 2, 18, 45];
    expect(
      await columnA({
        cellStyles,
        cells: [
          { value: "45306", style: 1 },
          { value: "45306.5729166667", style: 3 },
          { value: "0.5729166667", style: 2 },
          { value: "0.57291", style: 5 }, // 13:44:59.4
          { value: "0.0034722222", style: 6 }, // 5 minutes
          // Before: every one came out as its serial number.
          { value: "45306" }, // no style: General
          { value: "45306", style: 0 },
          { value: "45306.25", style: 4 }, // 0.00: a number, as written
          { value: "45306.5", style: 1 }, // a date format's cell holding a time keeps it
          { value: "45306", style: 3 }, // a date-time format shows its midnight
          { value: "1.5", style: 2 }, // a time format past one day is a date and time
          { value: "-1", style: 1 }, // Excel shows no negative date: as written
          { value: "3000000", style: 1 }, // past 9999-12-31: as written
          { value: "0", type: "s", style: 1 }, // a shared string keeps its text
          { value: "TRUE", type: "str", style: 1 }, // a formula's string too
        ],
      }),
    ).toEqual([
      "2024-01-15",
      "2024-01-15T13:45:00",
      "13:45:00",
      "13:44:59",
      "00:05:00",
      "45306",
      "45306",
      "45306.25",
      "2024-01-15T12:00:00",
      "2024-01-15T00:00:00",
      "1900-01-01T12:00:00",
      "-1",
      "3000000",
      "45306",
      "TRUE",
    ]);
  });

  it("reads custom formats' codes: date tokens outside quotes, escapes and [...] sections; elapsed times are durations", async () => {
    const numberFormats = {
      164: "dd/mm/yyyy",
      165: "0.00",
      166: '0.0 "days"', // d, a, y, s quoted
      167: "[Red]#,##0;[Blue]-#,##0", // the d of [Red] is a colour's
      168: "[h]:mm:ss", // a duration
      169: "[$-409]mmmm d, yyyy h:mm AM/PM",
      170: "hh:mm",
      171: '_(* #,##0_);_(* \\(#,##0\\);_(* "-"_);_(@_)', // accounting: padding and fill characters
      172: "#,##0\\ \\h", // an escaped h is text
      173: "[mm]:ss", // a duration
      14: "dd/mm/yyyy", // a built-in id redefined: still a date
      18: "0.00", // a built-in time id redefined as a number: a number
      46: "h:mm:ss", // the built-in duration redefined as a time of day
    };
    const ids = [164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 14, 18, 46];
    const cells = ids.map((_, index) => ({ value: index === 6 ? "0.75" : "45306.75", style: index }));
    expect(await columnA({ numberFormats, cellStyles: ids, cells })).toEqual([
      "2024-01-15T18:00:00",
      "45306.75",
      "45306.75",
      "45306.75",
      "45306.75",
      "2024-01-15T18:00:00",
      "18:00:00",
      "45306.75",
      "45306.75",
      "45306.75",
      "2024-01-15T18:00:00",
      "45306.75",
      "2024-01-15T18:00:00",
    ]);
    // Not redefined, built-in 46 is [h]:mm:ss, a duration; 47 is mmss.0, a time.
    expect(
      await columnA({
        cellStyles: [46, 47],
        cells: [
          { value: "1.5", style: 0 },
          { value: "0.0034722222", style: 1 },
        ],
      }),
    ).toEqual(["1.5", "00:05:00"]);
  });

  it("counts days from 1904-01-01 in a workbook of the 1904 date system", async () => {
    const cells = [
      { value: "43844", style: 1 },
      { value: "0", style: 1 },
      { value: "60", style: 1 },
      { value: "43844.5", style: 2 },
      { value: "0.5", style: 3 },
    ];
    expect(await columnA({ cellStyles: [0, 14, 22, 20], date1904: true, cells })).toEqual([
      "2024-01-15",
      "1904-01-01",
      "1904-03-01", // 1904 is a leap year, and this system counts its 29 February
      "2024-01-15T12:00:00",
      "12:00:00",
    ]);
    // The same serial in the 1900 system is four years and a day earlier.
    expect(await columnA({ cellStyles: [0, 14], cells: [{ value: "43844", style: 1 }] })).toEqual(["2020-01-14"]);
  });

  it("keeps Excel's 1900 leap-year bug: serial 60 is 1900-02-29, the days before it count from 1899-12-31", async () => {
    const serials = ["1", "31", "59", "59.5", "60", "60.25", "61", "62"];
    expect(await columnA({ cellStyles: [0, 15, 22], cells: serials.map((value) => ({ value, style: value.includes(".") ? 2 : 1 })) })).toEqual([
      "1900-01-01",
      "1900-01-31",
      "1900-02-28",
      "1900-02-28T12:00:00",
      "1900-02-29",
      "1900-02-29T06:00:00",
      "1900-03-01",
      "1900-03-02",
    ]);
  });

  it("reads the styles part its relationship names, relative to xl/ or absolute; xl/styles.xml when none names one", async () => {
    const cells = [{ value: "45306", style: 1 }];
    const at = async (stylesAt: { part: string; target?: string; external?: boolean }) => (await columnA({ cellStyles: [0, 14], cells, stylesAt }))[0];
    // Before: only xl/styles.xml was read, and the first two came out as the serial, 45306.
    expect(await at({ part: "xl/styles/custom.xml", target: "styles/custom.xml" })).toBe("2024-01-15");
    expect(await at({ part: "xl/other.xml", target: "/xl/other.xml" })).toBe("2024-01-15");
    expect(await at({ part: "xl/other.xml", target: "/xl/./styles/../other.xml" })).toBe("2024-01-15");
    // An external target names no part: xl/styles.xml is read, as when no relationship names one.
    expect(await at({ part: "xl/styles.xml", target: "file:///C:/styles.xml", external: true })).toBe("2024-01-15");
    expect(await at({ part: "xl/styles.xml", target: "styles.xml" })).toBe("2024-01-15");
    expect(await at({ part: "xl/styles.xml" })).toBe("2024-01-15");
    // A relationship names the styles part: xl/styles.xml beside it is not the workbook's.
    expect(await at({ part: "xl/styles.xml", target: "missing.xml" })).toBe("45306");
  });

  it("reads at most 65,536 cell styles of a styles part listing a million, in linear time", async () => {
    const started = performance.now();
    const cellStyles = '<xf numFmtId="14"/>'.repeat(1_000_000);
    const workbook = {
      cellStyles,
      cells: [
        { value: "45306", style: 65_535 },
        { value: "45306", style: 65_536 },
        { value: "45306", style: 999_999 },
      ],
    };
    expect(await columnA(workbook)).toEqual(["2024-01-15", "45306", "45306"]);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
