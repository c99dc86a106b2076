import type { HttpTrigger } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkAcceptance, MAX_ALLOWED_ORIGINS } from "../acceptance.ts";
import type { PipelineLimits } from "../definition.ts";
import { settingsInvalid } from "../settings.ts";

/** A DNS name (IDNs in their xn-- form), an IPv4 address or a bracketed IPv6 address; URL parsing alone lets "*.example.com" through. */
const ORIGIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

export function checkHttpTriggerSettings(trigger: HttpTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.allowedOrigins.length > MAX_ALLOWED_ORIGINS) {
    throw settingsInvalid(`${path}.allowed_origins`, `at most ${MAX_ALLOWED_ORIGINS} origins`);
  }
  trigger.allowedOrigins.forEach((origin, index) => {
    if (!isAllowedOriginValue(origin)) {
      throw settingsInvalid(
        `${path}.allowed_origins[${index}]`,
        `"${origin}" must be "*" or an exact origin as browsers send it, such as "https://app.example.com:8443" `
          + "(http or https, lowercase, no path, no trailing slash, no default port)",
      );
    }
  });
  checkAcceptance(trigger, path, limits);
}

/**
 * "*" or a value that equals its own serialized origin: that is exactly what a browser puts in the
 * Origin header, so anything else (a path, a trailing slash, uppercase, the default port) could never match.
 */
export function isAllowedOriginValue(value: string): boolean {
  if (value === "*") return true;
  const url = URL.parse(value);
  return url !== null && (url.protocol === "http:" || url.protocol === "https:") && url.origin === value && ORIGIN_HOST.test(url.hostname);
}
