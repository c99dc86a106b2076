import { randomBytes } from "node:crypto";
import type { SecretBox } from "./secret-box.ts";

/** A new secret value: "whsec_" and 256 random bits in base64url. The whole string is the HMAC key. */
function newSecretValue(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/** A new secret for the organization: its value (shown once), the value sealed for storage, and the hint listings show. */
export function newSigningSecret(box: SecretBox, organizationId: string): { value: string; ciphertext: Buffer; hint: string } {
  const value = newSecretValue();
  return { value, ciphertext: box.seal(value, organizationId), hint: value.slice(-4) };
}

/** The values of the organization's stored secrets, in their order; throws when one was not sealed for it. */
export function openSigningSecrets(box: SecretBox, secrets: readonly { ciphertext: Buffer }[], organizationId: string): string[] {
  return secrets.map((secret) => box.open(secret.ciphertext, organizationId));
}
