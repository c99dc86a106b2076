/** Document bytes received between two young collections (see YoungCollections). */
export const YOUNG_COLLECTION_BYTES = 16 * 1024 * 1024;

/**
 * Asks V8 for a young-generation collection (a scavenge) after every `everyBytes` of documents
 * received (uploads, downloads from the object store), when the process runs with `--expose-gc` as
 * `npm start` runs it; without the flag it does nothing.
 *
 * An upload arrives in socket buffers that live outside the JavaScript heap, and only a collection
 * frees them. Receiving a file allocates little on the heap per byte, so with Node's default young
 * generation (V8 sizes it from the heap limit: semi-spaces of up to 32 MB with a 4 GB limit) a
 * scavenge comes once per hundreds of megabytes of uploads, the buffers pile
 * up meanwhile, and V8 answers with full collections of the whole heap. Shrinking the young
 * generation (our flag before, `--max-semi-space-size=2`) freed them sooner, but made every small
 * request pay: at 1 KiB a scavenge every 13 requests instead of every few hundred, each promoting
 * the objects of the requests in flight to the old generation. Counting the bytes makes the scavenges follow the upload volume
 * rather than the heap's allocation rate, so small requests keep Node's default. The figures are in
 * bench/README.md.
 */
export class YoungCollections {
  readonly #collect: NodeJS.GCFunction | undefined;
  readonly #everyBytes: number;
  #received = 0;

  constructor(collect: NodeJS.GCFunction | undefined, everyBytes: number) {
    this.#collect = collect;
    this.#everyBytes = everyBytes;
  }

  /** Counts `bytes` of a document received, and collects the young generation when they reach the threshold. */
  received(bytes: number): void {
    if (this.#collect === undefined) return;
    this.#received += bytes;
    if (this.#received < this.#everyBytes) return;
    this.#received = 0;
    this.#collect({ type: "minor" });
  }
}

/**
 * The Node flags that `npm start` gives for the buffers documents arrive in, of those this process
 * was started without: `--expose-gc` (YoungCollections, with `collect` its `gc`) and
 * `--no-memory-reducer`, read from `execArgv` (NODE_OPTIONS may not carry it).
 *
 * V8's memory reducer shrinks a heap that has gone idle, then keeps the heap growing slowly (a limit
 * close to its size) until the old generation has grown by a tenth or 10 MB, whichever is more. A process whose
 * requests leave nothing in the old generation, as the edge's do since its multipart reader, never
 * grows that much, so after its first idle spell it stays there; the buffers of the uploads in
 * flight count against the same limit, and uploads of megabytes then started a full collection every
 * few requests and lost a quarter of their throughput (bench/README.md).
 */
export function missingCollectionFlags(execArgv: readonly string[], collect: NodeJS.GCFunction | undefined): string[] {
  const missing: string[] = [];
  if (collect === undefined) missing.push("--expose-gc");
  // V8 takes `--no_memory_reducer` and `--nomemory-reducer` for the same flag; the last of them and `--memory-reducer` wins.
  const reducer = execArgv.findLast((flag) => /^--(no[-_]?)?memory[-_]reducer$/.test(flag));
  if (reducer === undefined || !reducer.startsWith("--no")) missing.push("--no-memory-reducer");
  return missing;
}
