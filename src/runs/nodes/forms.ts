import type { NodeKind } from "./definition.ts";
import type { FormHints } from "./form-hints.ts";
import { httpTriggerForm } from "./http-trigger/form.ts";
import { emailTriggerForm } from "./email-trigger/form.ts";
import { parseForm } from "./parse/form.ts";
import { callbackForm } from "./callback/form.ts";
import { routeForm } from "./route/form.ts";
import { reviewForm } from "./review/form.ts";
import { extractForm } from "./extract/form.ts";
import { classifyForm } from "./classify/form.ts";
import { transformForm } from "./transform/form.ts";
import { validateForm } from "./validate/form.ts";
import { httpRequestForm } from "./http-request/form.ts";
import { emailForm } from "./email/form.ts";
import { chunkForm } from "./chunk/form.ts";
import { splitForm } from "./split/form.ts";
import { mergeForm } from "./merge/form.ts";
import { dedupeForm } from "./dedupe/form.ts";

/**
 * Every node kind's form hints, for the console: the part of each kind's definition that the
 * browser reads (the definitions themselves import the service's settings checks). A kind without
 * one is a compile error.
 */
export const NODE_FORMS = {
  httpTrigger: httpTriggerForm,
  emailTrigger: emailTriggerForm,
  parse: parseForm,
  callback: callbackForm,
  route: routeForm,
  review: reviewForm,
  extract: extractForm,
  classify: classifyForm,
  transform: transformForm,
  validate: validateForm,
  httpRequest: httpRequestForm,
  email: emailForm,
  chunk: chunkForm,
  split: splitForm,
  merge: mergeForm,
  dedupe: dedupeForm,
} as const satisfies { [K in NodeKind]: FormHints };
