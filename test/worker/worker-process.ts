// A worker process for the multi-process tests: startWorkers on DATABASE_URL (the test file's own
// database), files from STORAGE_DIR. Prints "ready" once started; SIGTERM stops it gracefully.
import { loadConfig } from "../../src/platform/config.ts";
import { connectDatabase } from "../../src/data/db/connection.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { startWorkers } from "../../src/runs/engine/worker.ts";

const config = loadConfig(process.env);
const databaseUrl = config.databaseUrl!;
const db = await connectDatabase(databaseUrl, { max: config.workerConcurrency + 1 });
const store = new FileStore(config.storageDir);
const quiet = () => {};
const log = { info: quiet, warn: quiet, error: (object: object, message: string) => console.error(message, object) };
const workers = startWorkers({ db, databaseUrl, config, store, log });
process.stdout.write("ready\n");
process.on("SIGTERM", async () => {
  await workers.stop();
  await db.destroy();
  process.exit(0);
});
