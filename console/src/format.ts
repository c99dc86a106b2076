import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

const pad = (value: number) => String(value).padStart(2, "0");

/** "2026-11-23 08:15" in the browser's time zone; "" for an unset time. */
export function formatTime(timestamp: Timestamp | undefined): string {
  if (timestamp === undefined) return "";
  const date = timestampDate(timestamp);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** 1234567 -> "1.2 MB" (1 MB = 1,048,576 bytes, as in a pipe's Max size). */
export function formatBytes(bytes: bigint | number): string {
  const value = Number(bytes);
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / (1024 * 1024)).toFixed(1)} MB`;
}

/** The time between two timestamps: "850 ms", "12.3 s", "4 min 5 s"; "" unless both are set. */
export function formatDuration(start: Timestamp | undefined, end: Timestamp | undefined): string {
  if (start === undefined || end === undefined) return "";
  return formatMs(timestampDate(end).getTime() - timestampDate(start).getTime());
}

/** A number of milliseconds: "850 ms", "12.3 s", "4 min 5 s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** An enum value's name in words: (RunStatus, RUN_STATUS_COMPLETED) -> "Completed". */
export function enumLabel(names: Record<number, string>, value: number): string {
  const name = names[value] ?? "UNSPECIFIED";
  return name.charAt(0) + name.slice(1).toLowerCase().replaceAll("_", " ");
}

/** The end of a local calendar day ("2027-01-31" from an <input type=date>), so a key works through its expiration date. */
export function endOfDay(date: string): Date {
  const [year = 0, month = 1, day = 1] = date.split("-").map(Number);
  return new Date(year, month - 1, day, 23, 59, 59, 999);
}

/** A file name cut in its middle to `max` characters, its ending kept (a list's choice stays one line). */
export function shortFileName(name: string, max = 60): string {
  const characters = [...name];
  if (characters.length <= max) return name;
  const tail = Math.floor(max / 3);
  return `${characters.slice(0, max - tail - 1).join("")}…${characters.slice(-tail).join("")}`;
}
