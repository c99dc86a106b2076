// The baseline the edge is measured against: a plain Fastify + @fastify/multipart route that streams
// the file through SHA-256 into the same FileStore and inserts one file row. No key, no rate limit,
// no pipe, no sniffing, no run. Settings from the environment: DATABASE_URL, PORT, STORAGE_DIR,
// ORGANIZATION_ID (the file rows' owner).
import { randomUUID } from "node:crypto";
import fastifyMultipart from "@fastify/multipart";
import Fastify from "fastify";
import { connectDatabase } from "../../src/data/db/connection.ts";
import { stepTiming } from "../../src/platform/observability/step-timing.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { YOUNG_COLLECTION_BYTES, YoungCollections } from "../../src/data/storage/young-collections.ts";

const MAX_BYTES = 200 * 1024 * 1024;

const db = await connectDatabase(process.env.DATABASE_URL!);
// The same young collections as ours, active when run with our Node flags (--expose-gc).
const store = new FileStore(process.env.STORAGE_DIR!, new YoungCollections(globalThis.gc, YOUNG_COLLECTION_BYTES));
await store.init();
const organizationId = process.env.ORGANIZATION_ID!;

const app = Fastify();
await app.register(fastifyMultipart);
app.get("/healthz", async () => ({ status: "ok" }));
// With DOCPIPE_STEP_TIMING (the bench's profiling pass), the steps ours times too; see StepTiming.
if (stepTiming !== undefined) {
  const timing = stepTiming;
  app.addHook("onRequest", (request, _reply, done) => {
    timing.begin(request);
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    timing.end("reply", reply);
    timing.end("total, from the first check", request);
    done();
  });
}
app.post("/upload", async (request, reply) => {
  let timed = stepTiming?.now();
  const part = await request.file({ limits: { fileSize: MAX_BYTES } });
  if (part === undefined) return reply.code(400).send({ error: "no file" });
  timed = stepTiming?.since("multipart: to the file part", timed!);
  const staged = await store.stage(part.file, MAX_BYTES);
  await store.commit(organizationId, staged);
  timed = stepTiming?.now();
  const id = randomUUID();
  await db
    .insertInto("files")
    .values({
      id,
      organization_id: organizationId,
      name: part.filename,
      content_type: part.mimetype,
      format: "pdf",
      size: staged.size,
      sha256: staged.sha256,
    })
    .execute();
  stepTiming?.since("CreateRun", timed!);
  stepTiming?.begin(reply);
  return reply.code(202).send({ fileId: id, sha256: staged.sha256, size: staged.size });
});
await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT) });

process.once("SIGTERM", async () => {
  await app.close();
  await db.destroy();
  process.exit(0);
});
