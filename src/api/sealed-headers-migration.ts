import type { Db } from "../data/db/schema.ts";
import { openCallbackHeaders, sealCallbackHeaders } from "../runs/pipes/credentials.ts";
import { SEALED_PREFIX } from "../runs/deliveries/sealed-headers.ts";
import type { SecretBox } from "../runs/deliveries/secret-box.ts";
import { pipelineVersionsWithUnsealedHeaders, rewritePipelineVersion } from "../data/repositories/pipes.ts";

/**
 * Seals the header values of pipeline versions stored before sealing began; returns how many
 * versions it rewrote. Run at start: afterwards no callback header is in the database in clear.
 * Several processes starting together may both rewrite a version; either result opens the same.
 */
export async function sealStoredCallbackHeaders(db: Db, box: SecretBox): Promise<number> {
  const versions = await pipelineVersionsWithUnsealedHeaders(db, SEALED_PREFIX);
  for (const version of versions) {
    const pipeline = sealCallbackHeaders(openCallbackHeaders(version.pipeline, box, version.organization_id), box, version.organization_id);
    await rewritePipelineVersion(db, version.pipe_id, version.version, pipeline);
  }
  return versions.length;
}
