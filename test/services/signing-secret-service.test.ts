import { toJsonString } from "@bufbuild/protobuf";
import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { SigningSecretState } from "../../gen/docpipe/v1/signing_secret_pb.js";
import { ListSigningSecretsResponseSchema, SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { openSigningSecrets } from "../../src/runs/deliveries/signing-secrets.ts";
import type { Database } from "../../src/data/db/schema.ts";
import { activeSigningSecrets } from "../../src/data/repositories/signing-secrets.ts";
import { createSigningSecretService } from "../../src/api/signing-secret-service.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps, testSecretBox } from "../support/deps.ts";
import { connectErrorOf } from "../support/errors.ts";
import { insertTenant } from "../worker/fixtures.ts";

let db: Kysely<Database>;
const now = new Date("2026-11-22T10:00:00Z");
let client: ReturnType<typeof inMemory>;

function inMemory() {
  const deps = testDeps(db, { SIGNING_SECRET_GRACE_SECONDS: "3600" }, () => now);
  return createClient(
    SigningSecretService,
    createRouterTransport((router) => router.service(SigningSecretService, createSigningSecretService(deps))),
  );
}

/** The values that sign the organization's callbacks at `at`, as the worker opens them. */
async function signingSecretValues(organizationId: string, at: Date): Promise<string[]> {
  return openSigningSecrets(testSecretBox(), await activeSigningSecrets(db, organizationId, at), organizationId);
}

beforeAll(async () => {
  db = await testDatabase();
  client = inMemory();
});

describe("SigningSecretService", () => {
  it("RotateSigningSecret returns the value once; it is stored sealed, and listings show only a hint", async () => {
    const { organizationId } = await insertTenant(db);
    const first = await client.rotateSigningSecret({ organizationId });
    expect(first.secretValue).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(first.secret).toMatchObject({ organizationId, hint: `…${first.secretValue.slice(-4)}`, state: SigningSecretState.CURRENT });
    expect(first.previous).toBeUndefined();
    const row = await db.selectFrom("signing_secrets").selectAll().where("id", "=", first.secret!.id).executeTakeFirstOrThrow();
    expect(row.ciphertext.includes(Buffer.from(first.secretValue))).toBe(false);
    expect(row.ciphertext.includes(Buffer.from(first.secretValue.slice(6)))).toBe(false);
    const { secrets } = await client.listSigningSecrets({ organizationId });
    expect(secrets.map((secret) => secret.id)).toEqual([first.secret!.id]);
    expect(toJsonString(ListSigningSecretsResponseSchema, { $typeName: "docpipe.v1.ListSigningSecretsResponse", secrets })).not.toContain(
      first.secretValue.slice(6),
    );
  });

  it("during the grace period both secrets sign; after it, or when expired early, only the new one", async () => {
    const { organizationId } = await insertTenant(db);
    const first = await client.rotateSigningSecret({ organizationId });
    const second = await client.rotateSigningSecret({ organizationId });
    expect(second.previous).toMatchObject({ id: first.secret!.id, state: SigningSecretState.PREVIOUS });
    expect(await signingSecretValues(organizationId, now)).toEqual([second.secretValue, first.secretValue]);
    expect((await client.listSigningSecrets({ organizationId })).secrets.map((secret) => secret.state)).toEqual([
      SigningSecretState.CURRENT,
      SigningSecretState.PREVIOUS,
    ]);
    expect(await signingSecretValues(organizationId, new Date(now.getTime() + 3601_000))).toEqual([second.secretValue]);

    const expired = await client.expirePreviousSigningSecret({ organizationId });
    expect(expired.expired?.id).toBe(first.secret!.id);
    expect(await signingSecretValues(organizationId, now)).toEqual([second.secretValue]);
    expect((await client.expirePreviousSigningSecret({ organizationId })).expired).toBeUndefined();
  });

  it("a rotation during a rotation drops the oldest secret, so at most two sign", async () => {
    const { organizationId } = await insertTenant(db);
    await client.rotateSigningSecret({ organizationId });
    const second = await client.rotateSigningSecret({ organizationId });
    const third = await client.rotateSigningSecret({ organizationId, gracePeriodSeconds: 60 });
    expect(await signingSecretValues(organizationId, now)).toEqual([third.secretValue, second.secretValue]);
    const zeroGrace = await client.rotateSigningSecret({ organizationId, gracePeriodSeconds: 0 });
    expect(await signingSecretValues(organizationId, now)).toEqual([zeroGrace.secretValue]);
  });

  it("a sealed secret does not open for another organization", async () => {
    const { organizationId } = await insertTenant(db);
    const other = await insertTenant(db);
    await client.rotateSigningSecret({ organizationId });
    await db.updateTable("signing_secrets").set({ organization_id: other.organizationId }).where("organization_id", "=", organizationId).execute();
    await expect(signingSecretValues(other.organizationId, now)).rejects.toThrow();
  });

  it("refuses unknown organizations and out-of-range grace periods", async () => {
    const { organizationId } = await insertTenant(db);
    expect((await connectErrorOf(client.rotateSigningSecret({ organizationId: "01890000-0000-7000-8000-000000000000" }))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(client.listSigningSecrets({ organizationId: "nope" }))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(client.rotateSigningSecret({ organizationId, gracePeriodSeconds: -1 }))).code).toBe(Code.InvalidArgument);
    expect((await connectErrorOf(client.rotateSigningSecret({ organizationId, gracePeriodSeconds: 31 * 86400 }))).code).toBe(Code.InvalidArgument);
  });
});
