import { type CallbackNode, CallbackMethodSchema } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkCallbackUrl } from "../../deliveries/address-guard.ts";
import type { PipelineLimits } from "../definition.ts";
import { checkRequestSettings } from "../request-settings.ts";
import { settingsInvalid } from "../settings.ts";

/** A URL the callback may reach (the operator's limits), without credentials; a known method; headers, retries and timeout. */
export function checkCallbackSettings(callback: CallbackNode, path: string, limits: PipelineLimits): void {
  const refused = checkCallbackUrl(callback.url, limits.allowPrivateCallbacks);
  if (refused !== undefined) throw settingsInvalid(`${path}.url`, refused);
  // Credentials in the URL would be stored and shown in clear; headers are sealed (see src/runs/deliveries/sealed-headers.ts).
  const { username, password } = new URL(callback.url);
  if (username !== "" || password !== "") throw settingsInvalid(`${path}.url`, "must not carry credentials (user:password@); send them in a header");
  if (!CallbackMethodSchema.values.some((known) => known.number === callback.method)) throw settingsInvalid(`${path}.method`, "must be POST, PUT or PATCH");
  checkRequestSettings(callback, path);
}
