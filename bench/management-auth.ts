import { type Client, createClient, createRouterTransport } from "@connectrpc/connect";
import { pino } from "pino";
import { Role } from "../gen/docpipe/v1/account_pb.js";
import { AccountService } from "../gen/docpipe/v1/account_service_pb.js";
import { PipeService } from "../gen/docpipe/v1/pipe_service_pb.js";
import { CSRF_HEADER, SESSION_COOKIE } from "../src/platform/auth/session-cookie.ts";
import { loadConfig } from "../src/platform/config.ts";
import { RunsQueuedNotifier } from "../src/data/db/run-notifications.ts";
import { inProcessAccess } from "../src/inbound/rpc/interceptors.ts";
import type { ServiceDeps } from "../src/api/deps.ts";
import { PageTokens } from "../src/api/pagination.ts";
import { createServices, serviceRoutes } from "../src/api/routes.ts";
import { BENCH_ENV, createBenchDatabase } from "./support/database.ts";
import { median } from "./support/median.ts";

// Management RPC calls per second made with a person's session (cookie, CSRF header, the session and
// memberships read per call, the permission table) against the same calls with no authentication
// (the in-process caller), in one process over the same services. Rounds alternate, the median of
// the round-by-round ratios counts.

export interface Row {
  name: string;
  value: number;
  unit: string;
}

const CONCURRENCY = 16;
const ROUNDS = 20;
const ROUND_MS = 200;
const WARMUP_MS = 500;

async function callsPerSecond(pipes: Client<typeof PipeService>, request: { organizationId: string; pipeId: string }, durationMs: number): Promise<number> {
  let calls = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      await pipes.getPipe(request);
      calls++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return calls / ((performance.now() - start) / 1000);
}

export async function benchManagementAuth(): Promise<Row[]> {
  const bench = await createBenchDatabase();
  try {
    const deps: ServiceDeps = {
      db: bench.db,
      config: loadConfig(BENCH_ENV),
      pageTokens: new PageTokens(undefined),
      runsQueued: new RunsQueuedNotifier(bench.db),
      now: () => new Date(),
    };
    const services = createServices(deps);
    const open = createRouterTransport(serviceRoutes(services, inProcessAccess(pino({ level: "silent" }))));
    const checked = serviceRoutes(services, { management: [], trigger: [], callers: "credentials" });
    const { organization } = await bench.clients.workspaces.createOrganization({ name: "bench" });
    const organizationId = organization!.id;
    const { pipe } = await bench.clients.pipes.createPipe({ organizationId, name: "bench pipe" });
    const { invitationToken } = await bench.clients.members.createInvitation({ organizationId, email: "bench@example.com", role: Role.MEMBER });
    let cookie = "";
    await createClient(AccountService, createRouterTransport(checked)).acceptInvitation(
      { invitationToken, name: "Bench", password: "a bench password" },
      { onHeader: (header) => (cookie = /docpipe_session=([^;]*)/.exec(header.get("set-cookie") ?? "")?.[1] ?? "") },
    );
    const session = createRouterTransport(checked, {
      transport: {
        interceptors: [
          (next) => (request) => {
            request.header.set("cookie", `${SESSION_COOKIE}=${cookie}`);
            request.header.set(CSRF_HEADER, "1");
            return next(request);
          },
        ],
      },
    });
    const clients = { open: createClient(PipeService, open), session: createClient(PipeService, session) };
    const request = { organizationId, pipeId: pipe!.id };
    for (const client of Object.values(clients)) await callsPerSecond(client, request, WARMUP_MS);
    const samples = { open: [] as number[], session: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["open", "session"] as const) : (["session", "open"] as const);
      for (const name of order) samples[name].push(await callsPerSecond(clients[name], request, ROUND_MS));
    }
    const ratio = median(samples.session.map((withSession, round) => withSession / samples.open[round]!));
    return [
      { name: "GetPipe in-process, no authentication", value: Math.round(median(samples.open)), unit: "calls/s" },
      { name: "GetPipe in-process, with a session", value: Math.round(median(samples.session)), unit: "calls/s" },
      { name: "GetPipe with a session / no authentication", value: Math.round(ratio * 1000) / 1000, unit: "ratio" },
    ];
  } finally {
    await bench.drop();
  }
}

if (import.meta.main) console.table(await benchManagementAuth());
