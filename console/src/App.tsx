import { useQueryClient } from "@tanstack/react-query";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useState, useSyncExternalStore } from "react";
import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";
import type { Workspace } from "../../gen/docpipe/v1/workspace_pb.js";
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  listWorkspaces,
} from "../../gen/docpipe/v1/workspace_service-WorkspaceService_connectquery.js";
import { EmptyState, ErrorNotice, Field } from "./components.tsx";
import { signOut } from "../../gen/docpipe/v1/account_service-AccountService_connectquery.js";
import { describeError, needsToken } from "./errors.ts";
import { AuditPage } from "./pages/AuditPage.tsx";
import { ReviewQueuePage, ReviewRunPage } from "./pages/ReviewPage.tsx";
import { KeysPage } from "./pages/KeysPage.tsx";
import { MembersPage } from "./pages/MembersPage.tsx";
import { PipeEditor } from "./pages/PipeEditor.tsx";
import { PipesPage } from "./pages/PipesPage.tsx";
import { RunPage } from "./pages/RunPage.tsx";
import { RunsPage } from "./pages/RunsPage.tsx";
import { InvitationPage, SignInPage } from "./pages/SignInPage.tsx";
import { SigningSecretPage } from "./pages/SigningSecretPage.tsx";
import { WorkspacesPage } from "./pages/WorkspacesPage.tsx";
import { parseRoute, type Route, routeHash } from "./route.ts";
import { internalToken } from "./transport.ts";
import { useLandingPage, usePermissions } from "./permissions.ts";
import type { Permission } from "../../src/platform/auth/roles.ts";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { useInvalidate } from "./invalidate.ts";

const subscribe = (onChange: () => void) => {
  window.addEventListener("hashchange", onChange);
  return () => window.removeEventListener("hashchange", onChange);
};

/** The page the location hash names. */
function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, () => location.hash));
}

export function App() {
  const route = useRoute();
  if (route.page === "invitation") return <InvitationPage token={route.token} />;
  return <Console route={route} />;
}

function Console({ route }: { route: Exclude<Route, { page: "invitation" }> }) {
  const organizations = useQuery(listOrganizations, { pageSize: 100 });
  const org = route.page === "start" ? undefined : route.org;
  const first = organizations.data?.organizations[0];

  // The start page opens the first organization's keys, or a reviewer's review queue, once the role is known.
  const landing = useLandingPage(first?.id, "keys");
  useEffect(() => {
    if (route.page === "start" && first !== undefined && landing !== undefined) location.replace(navHash(landing, first.id));
  }, [route.page, first, landing]);

  if (needsToken(organizations.error)) return <SignInPage tokenRejected={internalToken.read() !== null} />;
  if (organizations.isPending) return <p className="loading">Loading…</p>;
  if (organizations.error)
    return (
      <main className="single">
        <ErrorNotice error={organizations.error} />
      </main>
    );
  if (organizations.data.organizations.length === 0) return <FirstOrganization />;
  if (org === undefined) return <p className="loading">Loading…</p>;
  return <Shell route={route as OrgRoute} />;
}

function FirstOrganization() {
  const invalidate = useInvalidate(WorkspaceService);
  const [name, setName] = useState("");
  const [plan, setPlan] = useState("free");
  const create = useMutation(createOrganization, { onSuccess: () => invalidate() });
  const problem = create.error ? describeError(create.error) : undefined;
  return (
    <main className="single">
      <h1>docpipe console</h1>
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ name, plan });
        }}
      >
        <EmptyState>There is no organization yet. Create one to manage its keys, pipes and runs.</EmptyState>
        <Field label="Organization name" error={problem?.field === "name" ? problem.message : undefined}>
          {(control) => <input {...control} required value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label="Plan" hint="One of the plans this docpipe is configured with, e.g. free." error={problem?.field === "plan" ? problem.message : undefined}>
          {(control) => <input {...control} required value={plan} onChange={(event) => setPlan(event.target.value)} />}
        </Field>
        {problem && problem.field === undefined && <ErrorNotice error={create.error} />}
        <button className="primary" type="submit" disabled={create.isPending}>
          Create organization
        </button>
      </form>
    </main>
  );
}

/** "Receipts", or "EU (default)" for the default workspace unless its name already says so. */
function workspaceLabel(workspace: Workspace): string {
  return workspace.isDefault && workspace.name.toLowerCase() !== "default" ? `${workspace.name} (default)` : workspace.name;
}

type OrgRoute = Exclude<Route, { page: "start" } | { page: "invitation" }>;

/** The console's pages, each shown to the roles that may read it. */
const NAV: { label: string; page: OrgRoute["page"]; section: "Settings" | "Pipeline"; permission: Permission }[] = [
  { label: "Pipes", page: "pipes", section: "Pipeline", permission: "pipes.read" },
  { label: "Runs", page: "runs", section: "Pipeline", permission: "runs.read" },
  { label: "Review", page: "review", section: "Pipeline", permission: "runs.read" },
  { label: "API keys", page: "keys", section: "Settings", permission: "keys.read" },
  { label: "Workspaces", page: "workspaces", section: "Settings", permission: "workspaces.read" },
  { label: "Signing secret", page: "signing-secret", section: "Settings", permission: "signing_secrets.read" },
  { label: "Members", page: "members", section: "Settings", permission: "members.read" },
  { label: "Audit log", page: "audit", section: "Settings", permission: "audit.read" },
];

/** Which nav entry a page belongs to: a pipe's editor is under Pipes, a run's page under Runs. */
const navPage = (page: OrgRoute["page"]) => (page === "pipe" ? "pipes" : page === "run" ? "runs" : page);

function navHash(page: OrgRoute["page"], org: string): string {
  if (page === "runs") return routeHash({ page, org, pipeId: "", status: RunStatus.UNSPECIFIED });
  if (page === "review") return routeHash({ page, org, runId: "" });
  return routeHash({ page, org } as OrgRoute);
}

function Shell({ route }: { route: OrgRoute }) {
  const may = usePermissions(route.org);
  const home = useLandingPage(route.org, "pipes");
  // A page the role may not read (the organization switcher keeps the page; a link from another
  // organization) opens the organization's landing page instead of a permission error.
  const needs = NAV.find((entry) => entry.page === navPage(route.page))?.permission;
  useEffect(() => {
    if (home !== undefined && needs !== undefined && !may(needs)) location.replace(navHash(home, route.org));
  });
  const organizations = useQuery(listOrganizations, { pageSize: 100 });
  // Asked for by id: the organization in the address may be beyond the switcher's first page.
  const current = useQuery(getOrganization, { organizationId: route.org });
  const workspaces = useQuery(listWorkspaces, { organizationId: route.org, pageSize: 100 });
  // The workspace filter starts from All workspaces in each organization: it is reset while rendering the new one,
  // so no render pairs one organization with another's workspace.
  const [workspaceId, setWorkspaceId] = useState("");
  const [workspaceOrg, setWorkspaceOrg] = useState(route.org);
  if (workspaceOrg !== route.org) {
    setWorkspaceOrg(route.org);
    setWorkspaceId("");
  }
  const list = workspaces.data?.workspaces ?? [];
  const organization = current.data?.organization;
  const listed = organizations.data?.organizations ?? [];

  return (
    <div className="shell">
      <header className="top">
        <a className="brand" href={navHash(home ?? "pipes", route.org)}>
          docpipe
        </a>
        <div className="switchers">
          <label>
            <span>Organization</span>
            <select value={route.org} onChange={(event) => location.assign(routeHash({ page: navPage(route.page), org: event.target.value } as OrgRoute))}>
              {!listed.some((candidate) => candidate.id === route.org) && <option value={route.org}>{organization?.name ?? "Unknown organization"}</option>}
              {listed.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Workspace</span>
            <select value={workspaceId} onChange={(event) => setWorkspaceId(event.target.value)}>
              <option value="">All workspaces</option>
              {list.map((workspace) => (
                <option key={workspace.id} value={workspace.id}>
                  {workspaceLabel(workspace)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <SignOutButton />
      </header>
      <nav aria-label="Console">
        {(["Pipeline", "Settings"] as const).map((section) => {
          const entries = NAV.filter((entry) => entry.section === section && may(entry.permission));
          return (
            entries.length > 0 && (
              <div key={section} className="nav-section">
                <h2>{section}</h2>
                <ul>
                  {entries.map((entry) => (
                    <li key={entry.page}>
                      <a href={navHash(entry.page, route.org)} aria-current={navPage(route.page) === entry.page ? "page" : undefined}>
                        {entry.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </div>
            )
          );
        })}
      </nav>
      <main>
        {organization === undefined ? (
          <ErrorNotice error={current.error} />
        ) : (
          <Page route={route} workspaceId={workspaceId} workspaces={list} defaultWorkspaceId={organization.defaultWorkspaceId} />
        )}
      </main>
    </div>
  );
}

function Page({ route, ...context }: { route: OrgRoute; workspaceId: string; workspaces: Workspace[]; defaultWorkspaceId: string }) {
  switch (route.page) {
    case "keys":
      return <KeysPage org={route.org} />;
    case "pipes":
      return <PipesPage org={route.org} {...context} />;
    case "pipe":
      return <PipeEditor key={route.pipeId} org={route.org} pipeId={route.pipeId} {...context} />;
    case "runs":
      return <RunsPage route={route} workspaceId={context.workspaceId} />;
    case "run":
      return <RunPage org={route.org} runId={route.runId} />;
    case "workspaces":
      return <WorkspacesPage org={route.org} workspaces={context.workspaces} />;
    case "signing-secret":
      return <SigningSecretPage org={route.org} />;
    case "members":
      return <MembersPage org={route.org} />;
    case "audit":
      return <AuditPage org={route.org} />;
    case "review":
      return route.runId === "" ? <ReviewQueuePage org={route.org} /> : <ReviewRunPage key={route.runId} org={route.org} runId={route.runId} />;
  }
}

/** Ends the session (or forgets the operator token) and goes back to the sign-in page. */
function SignOutButton() {
  const queryClient = useQueryClient();
  const leave = async () => {
    if (internalToken.read() !== null) internalToken.forget();
    else await signOutCall.mutateAsync({}).catch(() => {});
    await queryClient.resetQueries();
  };
  const signOutCall = useMutation(signOut);
  return (
    <button type="button" className="sign-out" onClick={() => void leave()}>
      Sign out
    </button>
  );
}
