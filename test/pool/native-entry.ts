import { readFileSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";

// A stand-in for a parser taken over by its document, run by the task pool in place of its entry
// (under the same confinement as a real parse). The document (JSON) either holds its process (it
// never answers: its staged copy stays in its folder, as a document being parsed does), or carries
// a native addon (test/pool/native/probe.c), which it writes into its own folder and loads with
// process.dlopen, as code a document ran could; the addon then tries to read the paths it is given
// and to connect to a loopback port, below Node's permission model.

interface Probe {
  hold?: true;
  addon?: string;
  reads?: string[];
  port?: number;
}

const errnoNames = new Map(Object.entries(constants.errno).map(([name, value]) => [value, name]));
const residentMb = () => Math.round(process.memoryUsage.rss() / (1024 * 1024));

process.on("message", (task: { input: { file: { path: string } } }) => {
  const probe = JSON.parse(readFileSync(task.input.file.path, "utf8")) as Probe;
  if (probe.hold === true) return;
  const addonPath = join(process.env.TMPDIR!, "probe.node");
  writeFileSync(addonPath, Buffer.from(probe.addon!, "base64"));
  const addon = { exports: {} as { read(path: string): string | number; connect(port: number): number } };
  process.dlopen(addon, addonPath);
  const outcome = (value: string | number) => (typeof value === "string" ? value : (errnoNames.get(value) ?? `errno ${value}`));
  const connected = probe.port === undefined ? undefined : addon.exports.connect(probe.port);
  const output = {
    reads: Object.fromEntries((probe.reads ?? []).map((path) => [path, outcome(addon.exports.read(path))])),
    connect: connected === undefined ? undefined : connected === 0 ? "connected" : outcome(connected),
    uid: process.getuid?.(),
  };
  process.send?.({ docpipeResult: true, ok: true, output, residentMb: residentMb(), spent: false });
});
process.send?.({ docpipeReady: true, residentMb: residentMb() });
