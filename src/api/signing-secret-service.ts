import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type SigningSecret, SigningSecretSchema, SigningSecretState } from "../../gen/docpipe/v1/signing_secret_pb.js";
import type { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { lazySecretBox } from "../runs/deliveries/secret-box.ts";
import { newSigningSecret } from "../runs/deliveries/signing-secrets.ts";
import { newId } from "../platform/ids.ts";
import { activeSigningSecrets, expirePreviousSigningSecret, rotateSigningSecret, type SigningSecretSummary } from "../data/repositories/signing-secrets.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument } from "./errors.ts";
import { requireOrganization } from "./organizations.ts";

/** The longest grace period a rotation may ask for. */
const MAX_GRACE_PERIOD_SECONDS = 30 * 86400;

function toSigningSecret(row: SigningSecretSummary): SigningSecret {
  return create(SigningSecretSchema, {
    id: row.id,
    organizationId: row.organization_id,
    hint: `…${row.hint}`,
    state: row.expire_time === null ? SigningSecretState.CURRENT : SigningSecretState.PREVIOUS,
    createTime: timestampFromDate(row.create_time),
    ...(row.expire_time === null ? {} : { expireTime: timestampFromDate(row.expire_time) }),
  });
}

/** The grace period asked for, or the configured default; InvalidArgument outside 0..30 days. */
function gracePeriodSeconds(requested: number | undefined, fallback: number): number {
  if (requested === undefined) return fallback;
  if (requested < 0 || requested > MAX_GRACE_PERIOD_SECONDS) {
    throw invalidArgument("grace_period_seconds", `grace_period_seconds must be from 0 to ${MAX_GRACE_PERIOD_SECONDS}`);
  }
  return requested;
}

/**
 * SigningSecretService: per-organization callback signing secrets. Values are sealed with AES-256-GCM
 * (src/runs/deliveries/secret-box.ts) and returned once, by RotateSigningSecret; listings show hints only.
 */
export function createSigningSecretService(deps: ServiceDeps): ServiceImpl<typeof SigningSecretService> {
  const { db, config } = deps;
  const secretBox = lazySecretBox(config);

  return {
    async rotateSigningSecret(request) {
      const graceSeconds = gracePeriodSeconds(request.gracePeriodSeconds, config.signingSecretGraceSeconds);
      await requireOrganization(db, request.organizationId);
      const { value, ciphertext, hint } = newSigningSecret(await secretBox(), request.organizationId);
      const next = { id: newId(), organizationId: request.organizationId, ciphertext, hint };
      const rotation = await rotateSigningSecret(db, next, graceSeconds, deps.now());
      return {
        secret: toSigningSecret(rotation.secret),
        secretValue: value,
        ...(rotation.previous === undefined ? {} : { previous: toSigningSecret(rotation.previous) }),
      };
    },

    async listSigningSecrets(request) {
      await requireOrganization(db, request.organizationId);
      const rows = await activeSigningSecrets(db, request.organizationId, deps.now());
      return { secrets: rows.map(toSigningSecret) };
    },

    async expirePreviousSigningSecret(request) {
      await requireOrganization(db, request.organizationId);
      const expired = await expirePreviousSigningSecret(db, request.organizationId, deps.now());
      return expired === undefined ? {} : { expired: toSigningSecret(expired) };
    },
  };
}
