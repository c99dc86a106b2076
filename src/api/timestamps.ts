import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { invalidArgument } from "./errors.ts";

/** A nullable column as an optional proto Timestamp. */
export function optionalTimestamp(date: Date | null): Timestamp | undefined {
  return date === null ? undefined : timestampFromDate(date);
}

/** The seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the instants a request may name (RFC 3339's years). */
const EARLIEST_SECONDS = -62_135_596_800n;
const LATEST_SECONDS = 253_402_300_799n;

/**
 * A request's Timestamp as a Date. Any int64 of seconds is valid protobuf, but not every one is a
 * date JavaScript or PostgreSQL can hold: those are InvalidArgument on `field`, not a failed query.
 */
export function requestDate(field: string, timestamp: Timestamp): Date {
  if (timestamp.seconds < EARLIEST_SECONDS || timestamp.seconds > LATEST_SECONDS) {
    throw invalidArgument(field, `${field} must lie between the years 1 and 9999`);
  }
  return timestampDate(timestamp);
}

/** The expiration time asked for: unset means never; otherwise it must lie after `now`. */
export function futureExpireTime(expireTime: Timestamp | undefined, now: Date): Date | null {
  if (expireTime === undefined) return null;
  const date = requestDate("expire_time", expireTime);
  if (date.getTime() <= now.getTime()) throw invalidArgument("expire_time", "expire_time must be in the future");
  return date;
}
