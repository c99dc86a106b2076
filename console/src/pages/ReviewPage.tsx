import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { useInfiniteQuery, useMutation, useQuery } from "@connectrpc/connect-query";
import { type FormEvent, useEffect, useState } from "react";
import { ReviewDecision } from "../../../gen/docpipe/v1/pipe_pb.js";
import { RunStatus, StepStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { getRun, listRuns, resolveReview } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { RunService } from "../../../gen/docpipe/v1/run_service_pb.js";
import { EmptyState, ErrorNotice, Field, LoadMore, TableBox } from "../components.tsx";
import { formatTime } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { routeHash } from "../route.ts";
import { internalToken } from "../transport.ts";

/** The runs waiting for a person's review, oldest decisions first to take. */
export function ReviewQueuePage({ org }: { org: string }) {
  const query = useInfiniteQuery(
    listRuns,
    { organizationId: org, status: RunStatus.REVIEW, pageSize: 50, pageToken: "" },
    { pageParamKey: "pageToken", getNextPageParam: (page) => page.nextPageToken || undefined },
  );
  const runs = query.data?.pages.flatMap((page) => page.runs);
  return (
    <section aria-labelledby="review-title">
      <div className="page-head">
        <h1 id="review-title">Review</h1>
      </div>
      <ErrorNotice error={query.error} />
      {runs?.length === 0 && <EmptyState>No run waits for a review. Runs stop here when a pipe's review node asks for a person.</EmptyState>}
      {runs && runs.length > 0 && (
        <TableBox label="Runs waiting for a review">
          <table>
            <thead>
              <tr>
                <th scope="col">Document</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.id}>
                  <th scope="row">{run.file?.name}</th>
                  <td>{formatTime(run.createTime)}</td>
                  <td>
                    <a href={routeHash({ page: "review", org, runId: run.id })}>Review {run.file?.name}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <LoadMore query={query} />
    </section>
  );
}

/** A leaf of the run data the reviewer may correct: its path (`extract.fields.total.amount`) and value. */
interface Leaf {
  path: (string | number)[];
  value: string | number | boolean | null;
}

/** Leaves shown as fields at most; past that the data is edited as JSON. */
const MAX_FIELDS = 200;

function leavesOf(value: JsonValue, path: (string | number)[] = []): Leaf[] {
  if (value === null || typeof value !== "object") return [{ path, value }];
  const entries: [string | number, JsonValue][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  return entries.flatMap(([key, item]) => leavesOf(item, [...path, key]));
}

function withLeaf(data: JsonValue, path: (string | number)[], value: JsonValue): JsonValue {
  if (path.length === 0) return value;
  const [key, ...rest] = path;
  if (Array.isArray(data)) return data.map((item, index) => (index === key ? withLeaf(item, rest, value) : item));
  const object = (data ?? {}) as JsonObject;
  return { ...object, [key as string]: withLeaf(object[key as string] ?? null, rest, value) };
}

/** The leaves by the node whose output they are, the latest node first. */
function groupsOf(leaves: Leaf[]): [string, Leaf[]][] {
  const groups = new Map<string, Leaf[]>();
  for (const leaf of leaves) {
    const node = String(leaf.path[0] ?? "");
    groups.set(node, [...(groups.get(node) ?? []), leaf]);
  }
  return [...groups].reverse();
}

/** What the reviewer typed, as the leaf's type: a number stays a number when it still reads as one. */
function typed(original: Leaf["value"], text: string): JsonValue {
  if (typeof original === "number" && text.trim() !== "" && Number.isFinite(Number(text))) return Number(text);
  if (original === null && text === "") return null;
  return text;
}

/** The run's document as the browser shows it: a PDF in a frame, a picture as an image, else its name only. */
function RunDocument({ org, runId, name }: { org: string; runId: string; name: string }) {
  const [shown, setShown] = useState<{ url: string; type: string } | { error: string } | undefined>(undefined);
  useEffect(() => {
    let url: string | undefined;
    const token = internalToken.read();
    const headers: Record<string, string> = { "x-docpipe-console": "1", ...(token === null ? {} : { authorization: `Bearer ${token}` }) };
    fetch(`/run-documents/${encodeURIComponent(org)}/${encodeURIComponent(runId)}`, { headers })
      .then(async (response) => {
        if (!response.ok) throw new Error(((await response.json()) as { message?: string }).message ?? `HTTP ${response.status}`);
        const type = response.headers.get("content-type") ?? "";
        url = URL.createObjectURL(await response.blob());
        setShown({ url, type });
      })
      .catch((error: unknown) => setShown({ error: (error as Error).message }));
    return () => {
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [org, runId]);
  if (shown === undefined) return <p className="loading">Loading the document…</p>;
  if ("error" in shown) return <p className="notice error">The document cannot be shown: {shown.error}</p>;
  if (shown.type === "application/pdf") return <iframe className="document" src={shown.url} title={`Document: ${name}`} />;
  if (shown.type.startsWith("image/")) return <img className="document" src={shown.url} alt={`Document: ${name}`} />;
  return <p className="muted">{name}: this format is not shown in the browser.</p>;
}

/** One run in review: its document beside its data as a form, with Approve (and the corrections) and Reject (with a comment). */
export function ReviewRunPage({ org, runId }: { org: string; runId: string }) {
  const invalidate = useInvalidate(RunService);
  const run = useQuery(getRun, { organizationId: org, runId });
  const waiting = run.data?.run?.steps.find((step) => step.status === StepStatus.WAITING);
  const shownData = (waiting?.output?.data ?? {}) as JsonObject;
  const { file: _file, ...editable } = shownData;
  const [data, setData] = useState<JsonValue | undefined>(undefined);
  const [comment, setComment] = useState("");
  const resolve = useMutation(resolveReview, {
    onSuccess: async () => {
      await invalidate();
      location.assign(routeHash({ page: "review", org, runId: "" }));
    },
  });
  if (run.error) return <ErrorNotice error={run.error} />;
  if (run.data?.run === undefined) return <p className="loading">Loading…</p>;
  const current = data ?? (editable as JsonValue);
  const leaves = leavesOf(current);
  const name = run.data.run.file?.name ?? "";
  const approve = (event: FormEvent) => {
    event.preventDefault();
    resolve.mutate({ organizationId: org, runId, decision: ReviewDecision.APPROVE, data: current as JsonObject });
  };
  const reject = (event: FormEvent) => {
    event.preventDefault();
    resolve.mutate({ organizationId: org, runId, decision: ReviewDecision.REJECT, comment });
  };
  return (
    <section aria-labelledby="review-run-title">
      <p>
        <a href={routeHash({ page: "review", org, runId: "" })}>← Runs waiting for a review</a>
      </p>
      <div className="page-head">
        <h1 id="review-run-title">Review of {name}</h1>
      </div>
      {waiting === undefined ? (
        <p className="notice">This run does not wait for a review (any more).</p>
      ) : (
        <div className="review">
          <div className="card">
            <RunDocument org={org} runId={runId} name={name} />
          </div>
          <div>
            <form className="card" onSubmit={approve} aria-labelledby="data-title">
              <h2 id="data-title">Data</h2>
              {leaves.length > MAX_FIELDS ? (
                <Field label="Data (JSON)">
                  {(control) => (
                    <textarea
                      {...control}
                      className="code"
                      rows={20}
                      defaultValue={JSON.stringify(current, null, 2)}
                      onChange={(event) => {
                        try {
                          setData(JSON.parse(event.target.value) as JsonValue);
                        } catch {
                          // kept as typed until it is JSON again
                        }
                      }}
                    />
                  )}
                </Field>
              ) : (
                // One group per node, the latest first and open: what the step before the review produced is what a person checks.
                groupsOf(leaves).map(([node, group], index) => (
                  <details key={node} open={index === 0}>
                    <summary>{node}</summary>
                    {group.map((leaf) => {
                      const label = leaf.path.join(".");
                      return typeof leaf.value === "boolean" ? (
                        <label key={label} className="inline">
                          <input type="checkbox" checked={leaf.value} onChange={(event) => setData(withLeaf(current, leaf.path, event.target.checked))} />
                          {label}
                        </label>
                      ) : (
                        <Field key={label} label={label}>
                          {(control) => (
                            <input
                              {...control}
                              value={leaf.value === null ? "" : String(leaf.value)}
                              onChange={(event) => setData(withLeaf(current, leaf.path, typed(leaf.value, event.target.value)))}
                            />
                          )}
                        </Field>
                      );
                    })}
                  </details>
                ))
              )}
              {resolve.error && <ErrorNotice error={resolve.error} />}
              <div className="actions">
                <button type="submit" className="primary" disabled={resolve.isPending}>
                  Approve
                </button>
              </div>
            </form>
            <form className="card" onSubmit={reject}>
              <Field label="Why reject" hint="Required: the run ends Failed with this comment (review_rejected).">
                {(control) => <textarea {...control} rows={2} required value={comment} onChange={(event) => setComment(event.target.value)} />}
              </Field>
              <div className="actions">
                <button type="submit" className="danger" disabled={resolve.isPending}>
                  Reject
                </button>
              </div>
            </form>
          </div>
        </div>
      )}
    </section>
  );
}
