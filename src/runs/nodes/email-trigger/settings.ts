import type { EmailTrigger } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkAcceptance, MAX_ALLOWED_ORIGINS } from "../acceptance.ts";
import type { PipelineLimits } from "../definition.ts";
import { settingsInvalid } from "../settings.ts";

const MAX_MESSAGES_PER_HOUR = 100_000;

/** "*", "@example.com" or an address: what an email trigger's allowed_senders may hold. */
const SENDER = /^(?:\*|@[^\s@]+|[^\s@]+@[^\s@]+)$/;

export function checkEmailTriggerSettings(trigger: EmailTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.allowedSenders.length > MAX_ALLOWED_ORIGINS) throw settingsInvalid(`${path}.allowed_senders`, `at most ${MAX_ALLOWED_ORIGINS} senders`);
  trigger.allowedSenders.forEach((sender, index) => {
    if (!SENDER.test(sender)) {
      throw settingsInvalid(`${path}.allowed_senders[${index}]`, `"${sender.slice(0, 100)}" must be "*", a domain such as "@example.com" or an address`);
    }
  });
  checkAcceptance(trigger, path, limits);
  for (const [field, value] of [
    ["max_messages_per_hour", trigger.maxMessagesPerHour],
    ["max_messages_per_sender_per_hour", trigger.maxMessagesPerSenderPerHour],
  ] as const) {
    if (value !== undefined && (value < 0 || value > MAX_MESSAGES_PER_HOUR))
      throw settingsInvalid(`${path}.${field}`, `must be from 0 to ${MAX_MESSAGES_PER_HOUR}`);
  }
}
