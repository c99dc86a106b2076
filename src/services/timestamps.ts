import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";

/** A nullable column as an optional proto Timestamp. */
export function optionalTimestamp(date: Date | null): Timestamp | undefined {
  return date === null ? undefined : timestampFromDate(date);
}
