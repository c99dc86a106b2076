import type { EmailTrigger, HttpTrigger } from "../../../gen/docpipe/v1/pipe_pb.js";
import { FORMAT_IDS, isFormatId } from "../../documents/formats/format-ids.ts";
import type { PipelineLimits } from "./definition.ts";
import { settingsInvalid } from "./settings.ts";

/** The most origins or senders a trigger may list. */
export const MAX_ALLOWED_ORIGINS = 100;

/** Accepted formats and size limit, as HTTP and email triggers both have them. */
export function checkAcceptance(trigger: HttpTrigger | EmailTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.acceptedFormats.length === 0) {
    throw settingsInvalid(`${path}.accepted_formats`, `must list at least one of ${FORMAT_IDS.join(", ")}`);
  }
  const listed = new Set<string>();
  trigger.acceptedFormats.forEach((format, index) => {
    if (!isFormatId(format))
      throw settingsInvalid(`${path}.accepted_formats[${index}]`, `unknown format "${format.slice(0, 100)}"; known: ${FORMAT_IDS.join(", ")}`);
    if (listed.has(format)) throw settingsInvalid(`${path}.accepted_formats[${index}]`, `"${format}" is listed twice`);
    listed.add(format);
  });
  if (trigger.maxSizeMb < 1 || trigger.maxSizeMb > limits.maxSizeMbLimit) {
    throw settingsInvalid(`${path}.max_size_mb`, `must be from 1 to ${limits.maxSizeMbLimit}`);
  }
}
