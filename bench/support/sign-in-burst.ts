// A sign-in burst, run in a process of its own so its thousand callers never share the event loop
// of the bench that times another organization's calls (bench/inbound.ts). Reads a BurstSpec (JSON)
// from argv[2], prints the answers by code (JSON) on stdout and exits.
import { Agent, request } from "node:http";

export interface BurstSpec {
  /** The SignIn procedure's URL (Connect, JSON). */
  url: string;
  email: string;
  callers: number;
  /** The callers come from this many loopback addresses (127.0.x.y), as a botnet's would. */
  addresses: number;
  durationMs: number;
  /**
   * Whether a refused caller waits as the refusal's Retry-After says, spread over up to twice that
   * (as HTTP client libraries retry), or sends its next attempt at once. A wrong password is always
   * followed by the next guess at once.
   */
  honourRetryAfter: boolean;
}

/** The answers by their code (the ErrorInfo reason where there is one), `ok`, or `no_answer`. */
export type BurstAnswers = Record<string, number>;

interface Answer {
  code: string;
  retryAfterSeconds: number | undefined;
}

function loopbackAddress(index: number): string {
  return `127.0.${1 + Math.floor(index / 250)}.${1 + (index % 250)}`;
}

function signIn(agent: Agent, spec: BurstSpec, body: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      spec.url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const header = res.headers["retry-after"];
          const retryAfterSeconds = header === undefined || !/^\d+$/.test(header) ? undefined : Number(header);
          if (res.statusCode === 200) return resolve({ code: "ok", retryAfterSeconds });
          try {
            const error = JSON.parse(Buffer.concat(chunks).toString()) as { code?: string; details?: { debug?: { reason?: string } }[] };
            resolve({ code: error.details?.[0]?.debug?.reason ?? error.code ?? String(res.statusCode), retryAfterSeconds });
          } catch {
            resolve({ code: String(res.statusCode), retryAfterSeconds });
          }
        });
        res.on("error", () => resolve({ code: "no_answer", retryAfterSeconds: undefined }));
      },
    );
    req.on("error", () => resolve({ code: "no_answer", retryAfterSeconds: undefined }));
    req.end(body);
  });
}

const spec = JSON.parse(process.argv[2]!) as BurstSpec;
const deadline = performance.now() + spec.durationMs;
const agents = Array.from({ length: spec.addresses }, (_, index) => new Agent({ keepAlive: true, localAddress: loopbackAddress(index) }));
const answers: BurstAnswers = {};
await Promise.all(
  Array.from({ length: spec.callers }, async (_, caller) => {
    const agent = agents[caller % spec.addresses]!;
    let guess = 0;
    while (performance.now() < deadline) {
      const answer = await signIn(agent, spec, JSON.stringify({ email: spec.email, password: `guess ${caller}-${guess++}` }));
      answers[answer.code] = (answers[answer.code] ?? 0) + 1;
      if (!spec.honourRetryAfter) continue;
      const waitMs = answer.retryAfterSeconds !== undefined ? answer.retryAfterSeconds * 1000 : answer.code === "no_answer" ? 100 : 0;
      if (waitMs === 0) continue;
      const until = performance.now() + waitMs * (1 + Math.random());
      // A caller told to come back after the round is over is done.
      if (until >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, until - performance.now()));
    }
  }),
);
for (const agent of agents) agent.destroy();
process.stdout.write(JSON.stringify(answers));
