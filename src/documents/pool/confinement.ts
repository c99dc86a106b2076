import { execFile } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CHECKOUT } from "../../platform/checkout.ts";
import { type Owner, reachableBy } from "../../platform/reachable.ts";

/** The module pool processes run unless told otherwise. */
export const TASK_ENTRY = fileURLToPath(new URL("./task-entry.ts", import.meta.url));

/** How many distinct users pool processes take turns with: the n-th process started runs as the first id + (n mod this). */
const PARSE_ID_SPAN = 65_536;

/** util-linux's tools, where this system has them. */
const tool = (name: string) => [`/usr/bin/${name}`, `/bin/${name}`].find((path) => existsSync(path));
const PRLIMIT = tool("prlimit");
const SETPRIV = tool("setpriv");
const UNSHARE = tool("unshare");
const MOUNT = tool("mount");
const SHELL = "/bin/sh";

/**
 * Runs in the new namespaces, still as root: bind-mounts each `from` `to` pair given before `--`
 * (the checkout, and Node's folder when it lies outside it), then runs what follows `--`. Its shell
 * exports PWD, which a pool process's environment must not gain.
 */
const MOUNT_SCRIPT = `while [ "$1" != -- ]; do ${MOUNT ?? "mount"} --bind "$1" "$2" || exit 125; shift 2; done; shift; unset PWD; exec "$@"`;

/** Where a pool process finds what it runs, as it sees them. */
interface RuntimePaths {
  /** The code (`src/`). */
  source: string;
  /** The packages (`node_modules/`). */
  nodeModules: string;
  /** The module it runs. */
  entry: string;
  /** The Node binary. */
  node: string;
}

/** How this machine starts pool processes, decided once per pool (see docs/security.md, "Parse processes"). */
export interface Launch {
  paths: RuntimePaths;
  /** The user and group the n-th process runs as, or undefined: the service's own. */
  userOf(n: number): Owner | undefined;
  /** The program and arguments that run Node confined (the Node command line follows them), for a process of `user` with `dataLimitBytes`. */
  prefix(user: Owner | undefined, dataLimitBytes: number): string[];
}

export interface LaunchOptions {
  /** The first user and group id of the range pool processes run as when this process runs as root. */
  firstId: Owner | undefined;
  /** The module pool processes run. */
  entry: string;
  /** An empty folder, reachable by every user, where the runtime is bind-mounted in a process's namespace. */
  mountPoint: string;
  /** Said once, when processes cannot be confined as documented. */
  warn: (message: string) => void;
}

/**
 * Decides how pool processes start here:
 *
 * - As root with namespaces (`unshare --net --mount` works): each process in a network namespace of
 *   its own with no interface up (it reaches nothing, loopback services included) and a mount
 *   namespace where the checkout (and Node's folder) is bind-mounted under `mountPoint`, so that it
 *   can run the code even when the checkout lies under a folder of mode 0700 (`/root`, `mktemp -d`);
 *   then `setpriv` makes it a user of its own (`firstId` + n) without groups, capabilities or new
 *   privileges, and `prlimit` sets its kernel data limit.
 * - As root without namespaces (a container without CAP_SYS_ADMIN): the same users, the network
 *   shared; when those users cannot reach the checkout, processes run as root, said once.
 * - As another user: processes run as the service's user, without new privileges, the network
 *   shared; said once, naming the fix.
 */
export async function planLaunch(options: LaunchOptions): Promise<Launch> {
  const root = process.getuid?.() === 0;
  const node = realpathSync(process.execPath);
  const namespaces = root && SETPRIV !== undefined && (await namespacesWork());
  const ownUsers = root && SETPRIV !== undefined && options.firstId !== undefined;
  const userOf = (n: number): Owner | undefined =>
    options.firstId === undefined ? undefined : { uid: options.firstId.uid + (n % PARSE_ID_SPAN), gid: options.firstId.gid + (n % PARSE_ID_SPAN) };

  if (namespaces && ownUsers) {
    const code = join(options.mountPoint, "code");
    const nodeFolder = within(CHECKOUT, node) ? undefined : dirname(node);
    const binds = [CHECKOUT, code, ...(nodeFolder === undefined ? [] : [nodeFolder, join(options.mountPoint, "node")])];
    const mapped = (path: string) => (within(CHECKOUT, path) ? join(code, relative(CHECKOUT, path)) : path);
    return {
      paths: {
        source: join(code, "src"),
        nodeModules: join(code, "node_modules"),
        entry: mapped(options.entry),
        node: nodeFolder === undefined ? mapped(node) : join(options.mountPoint, "node", relative(nodeFolder, node)),
      },
      userOf,
      prefix: (user, limit) => [
        UNSHARE!,
        "--net",
        "--mount",
        "--propagation=private",
        "--",
        SHELL,
        "-c",
        MOUNT_SCRIPT,
        "sh",
        ...binds,
        "--",
        ...dropTo(user),
        ...dataLimit(limit),
      ],
    };
  }

  const paths = { source: join(CHECKOUT, "src"), nodeModules: join(CHECKOUT, "node_modules"), entry: options.entry, node };
  let users = ownUsers ? userOf : () => undefined;
  if (root) {
    options.warn(
      `parse processes share this machine's network, loopback services included: ${
        SETPRIV === undefined ? "setpriv (util-linux) is missing" : "`unshare --net --mount` is not permitted here"
      }; give the service CAP_SYS_ADMIN (or run it on a host where root may create namespaces) to isolate them`,
    );
    const probe = userOf(0);
    const unreachable = probe === undefined ? undefined : [paths.source, paths.entry, node].find((path) => !reachableBy(probe, path));
    if (SETPRIV === undefined) {
      options.warn("parse processes run as root: setpriv (util-linux) is missing; install util-linux so that each runs as a user of its own");
    } else if (unreachable !== undefined) {
      users = () => undefined;
      options.warn(
        `parse processes run as root: their users (PARSE_UID ${probe!.uid} and up) cannot reach ${unreachable} (a parent folder is private, e.g. mode 0700); move the checkout to a folder every user may pass through, or allow namespaces (above)`,
      );
    }
  } else {
    options.warn(
      "parse processes run as this service's user, which is not root: they cannot get users of their own nor a network namespace; run the service as root (it starts them as PARSE_UID and up, without network) to isolate them from each other",
    );
  }
  return {
    paths,
    userOf: users,
    prefix: (user, limit) => [...(SETPRIV === undefined ? [] : dropTo(user)), ...dataLimit(limit)],
  };
}

/** setpriv: to `user` without groups or capabilities when given, and no new privileges (setuid programs, file capabilities) either way. */
function dropTo(user: Owner | undefined): string[] {
  const switchUser = user === undefined ? [] : [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"];
  return [SETPRIV!, ...switchUser, "--no-new-privs", "--"];
}

/** prlimit: the kernel's data limit, where this system has prlimit. */
function dataLimit(bytes: number): string[] {
  return PRLIMIT === undefined ? [] : [PRLIMIT, `--data=${bytes}`, "--"];
}

function within(folder: string, path: string): boolean {
  return path.startsWith(folder + sep);
}

let namespacesProbe: Promise<boolean> | undefined;

/** Whether this process may start a program in new network and mount namespaces (root with CAP_SYS_ADMIN); asked once. */
function namespacesWork(): Promise<boolean> {
  namespacesProbe ??=
    UNSHARE === undefined || MOUNT === undefined
      ? Promise.resolve(false)
      : promisify(execFile)(UNSHARE, ["--net", "--mount", "--propagation=private", "--", "/bin/true"], { timeout: 10_000 }).then(
          () => true,
          () => false,
        );
  return namespacesProbe;
}
