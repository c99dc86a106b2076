import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

// Summaries of a V8 CPU profile (node --cpu-prof): self time per function and per component.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  /** Microseconds on the monotonic clock, as process.hrtime.bigint() / 1000n. */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

interface SelfTime {
  name: string;
  /** Milliseconds of CPU (the profile's wall samples minus idle). */
  ms: number;
}

export interface ProfileSummary {
  /** CPU time, idle excluded. */
  busyMs: number;
  /** The `count` costliest functions. */
  functions: SelfTime[];
  /** Every component, costliest first. */
  components: SelfTime[];
}

/** Which library or part of docpipe a script URL belongs to. */
function componentOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules !== null) return modules[1]!;
  if (url.startsWith("node:"))
    return (
      "node:"
      + url
        .slice("node:".length)
        .replace(/^internal\//, "")
        .split("/")[0]
    );
  const own = /\/(src|gen|bench)\/(\w+)/.exec(url);
  return own === null ? url : `docpipe ${own[1]}/${own[2]}`;
}

function top(totals: Map<string, number>, count: number): SelfTime[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, ms: us / 1000 }));
}

/** Self times of the samples taken between `fromUs` and `toUs` (monotonic microseconds): the measured load, not start-up. */
export function summarizeProfile(profile: CpuProfile, fromUs: number, toUs: number, count = 12): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const functions = new Map<string, number>();
  const components = new Map<string, number>();
  let busyUs = 0;
  let time = profile.startTime;
  profile.samples.forEach((id, index) => {
    const us = profile.timeDeltas[index] ?? 0;
    time += us;
    if (time < fromUs || time > toUs) return;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") return;
    busyUs += us;
    const file = url.replace(/^.*\/(node_modules|src|gen|bench)\//, "$1/");
    const name = `${functionName || "(anonymous)"} ${file}${url === "" ? "" : `:${lineNumber + 1}`}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const component = componentOf(url, functionName);
    components.set(component, (components.get(component) ?? 0) + us);
  });
  return { busyMs: busyUs / 1000, functions: top(functions, count), components: top(components, components.size) };
}

/** Reads the one .cpuprofile a process wrote into `dir`. */
export async function readProfile(dir: string): Promise<CpuProfile> {
  const [file] = (await readdir(dir)).filter((name) => name.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no CPU profile in ${dir}`);
  return JSON.parse(await readFile(join(dir, file), "utf8")) as CpuProfile;
}
