/**
 * Excel's dates. A SpreadsheetML date cell is a number, days since the workbook's epoch, that a
 * date or time number format shows as a date: the cell's style says so, not the cell. The format
 * classifier is ours: SheetJS's SSF, the library that has one, is a whole number formatter that
 * also counts `[h]:mm` durations as dates, and what we need, which tokens stand outside literal
 * text, is one loop.
 */

/** What a number format shows of a date: the day, the time of day, both, or (a locale's built-in format) whatever the value holds. */
export type DateFormat = "date" | "time" | "datetime" | "locale";

/** What a worksheet needs to write its date cells as dates. */
export interface CellDates {
  /** Each cell style's date format, by the style's index (a cell's `s`); undefined where it shows no date. */
  styles: readonly (DateFormat | undefined)[];
  /** The 1904 date system (serial 0 is 1904-01-01), older Excel for Mac's; else serial 1 is 1900-01-01. */
  date1904: boolean;
}

/**
 * The date and time formats among the built-in ones (ECMA-376 Part 1, 18.8.30), which a styles
 * part uses by id without writing their codes. 27-36 and 50-58 are dates or times by locale (a
 * Japanese 32 is `h"時"mm"分"`, a Korean 34 `yyyy-mm-dd`). 46, `[h]:mm:ss`, is a duration.
 */
const BUILT_IN_DATE_FORMATS = new Map<number, string>([
  [14, "mm-dd-yy"],
  [15, "d-mmm-yy"],
  [16, "d-mmm"],
  [17, "mmm-yy"],
  [18, "h:mm AM/PM"],
  [19, "h:mm:ss AM/PM"],
  [20, "h:mm"],
  [21, "h:mm:ss"],
  [22, "m/d/yy h:mm"],
  [45, "mm:ss"],
  [46, "[h]:mm:ss"],
  [47, "mmss.0"],
]);

/** The date format of a built-in number format id, if it is one. */
export function builtInDateFormat(id: number): DateFormat | undefined {
  if ((id >= 27 && id <= 36) || (id >= 50 && id <= 58)) return "locale";
  const code = BUILT_IN_DATE_FORMATS.get(id);
  return code === undefined ? undefined : dateFormat(code);
}

/** The longest format code read: Excel writes 255 characters at most; a longer one shows no date. */
const MAX_FORMAT_CODE = 1000;

/** An elapsed-time section, `[h]`, `[mm]`, `[ss]`: a duration, shown past 24 hours, not a time of day. */
const ELAPSED = /^(?:h+|m+|s+)$/i;

/**
 * What a number format code shows of a date, if anything: its date tokens (y, d, m for months) and
 * time tokens (h, s, AM/PM, A/P; m for minutes when it follows h or precedes s), outside quoted
 * text, characters taken literally (`\x`, and `_x` and `*x`, padding and fill) and `[...]` sections
 * (colours, conditions, locales: `[Red]` is no day). A code with an elapsed-time section is a
 * duration. One pass: every skip jumps ahead, so a code costs its length, MAX_FORMAT_CODE at most.
 */
export function dateFormat(code: string): DateFormat | undefined {
  if (code.length > MAX_FORMAT_CODE) return undefined;
  const tokens: string[] = [];
  for (let at = 0; at < code.length; at++) {
    const char = code[at]!.toLowerCase();
    if (char === '"') {
      const end = code.indexOf('"', at + 1);
      at = end === -1 ? code.length : end;
    } else if (char === "\\" || char === "_" || char === "*") at++;
    else if (char === "[") {
      const end = code.indexOf("]", at + 1);
      if (end === -1) break;
      if (ELAPSED.test(code.slice(at + 1, end))) return undefined;
      at = end;
    } else if (char === "a" && /^(?:am\/pm|a\/p)/i.test(code.slice(at, at + 5))) {
      tokens.push("a");
      at += code[at + 1]!.toLowerCase() === "m" ? 4 : 2;
    } else if ("ymdhs".includes(char) && !(tokens.at(-1) === char && code[at - 1]!.toLowerCase() === char)) tokens.push(char);
  }
  const minute = (index: number) => tokens[index - 1] === "h" || tokens[index + 1] === "s";
  const date = tokens.some((token, index) => token === "y" || token === "d" || (token === "m" && !minute(index)));
  const time = tokens.some((token, index) => token === "h" || token === "s" || token === "a" || (token === "m" && minute(index)));
  return date && time ? "datetime" : date ? "date" : time ? "time" : undefined;
}

const SECONDS_PER_DAY = 86_400;
const MS_PER_DAY = SECONDS_PER_DAY * 1000;

/**
 * A date-styled number as ISO 8601 text, to the nearest second: `2024-01-15` for a whole day in a
 * format without a time, `13:45:00` for a time of day (under one day) in a time-only format, else
 * `2024-01-15T13:45:00` (a date format's cell holding a time keeps it). Undefined where Excel shows
 * no date either: a negative number, or one past 9999-12-31.
 */
export function dateText(serial: number, format: DateFormat, date1904: boolean): string | undefined {
  if (!Number.isFinite(serial) || serial < 0) return undefined;
  const seconds = Math.round(serial * SECONDS_PER_DAY);
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const time = timeOfDay(seconds - days * SECONDS_PER_DAY);
  if (days === 0 && (format === "time" || format === "locale")) return time;
  const day = calendarDay(days, date1904);
  if (day === undefined) return undefined;
  return time === "00:00:00" && (format === "date" || format === "locale") ? day : `${day}T${time}`;
}

/**
 * Day `days` of a date system as `YYYY-MM-DD`. Excel's 1900 system counts 1900-02-29, which never
 * was (Lotus 1-2-3's bug, kept): serial 60 is written so, as Excel shows it, and serials below it
 * count from 1899-12-31, those above from 1899-12-30.
 */
function calendarDay(days: number, date1904: boolean): string | undefined {
  if (!date1904 && days === 60) return "1900-02-29";
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : days < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const date = new Date(epoch + days * MS_PER_DAY);
  return date.getUTCFullYear() <= 9999 ? date.toISOString().slice(0, 10) : undefined;
}

/** A second of the day as `HH:MM:SS`. */
function timeOfDay(second: number): string {
  return [Math.floor(second / 3600), Math.floor(second / 60) % 60, second % 60].map((part) => String(part).padStart(2, "0")).join(":");
}
