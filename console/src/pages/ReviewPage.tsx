import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { useInfiniteQuery, useMutation, useQuery } from "@connectrpc/connect-query";
import { type FormEvent, useEffect, useState } from "react";
import { ReviewDecision } from "../../../gen/docpipe/v1/pipe_pb.js";
import { NodeType, RunStatus, StepStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { getRun, listRuns, resolveReview } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { RunService } from "../../../gen/docpipe/v1/run_service_pb.js";
import { EmptyState, ErrorNotice, Field, LoadMore, TableBox } from "../components.tsx";
import { formatTime } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { routeHash } from "../route.ts";
import { internalToken } from "../transport.ts";
import { usePermissions } from "../permissions.ts";

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

/** The leaves by the node whose output they are, the latest node first; a node in `shownEmpty` is listed without leaves too. */
function groupsOf(leaves: Leaf[], nodes: readonly string[], shownEmpty: ReadonlySet<string>): [string, Leaf[]][] {
  const groups = new Map<string, Leaf[]>(nodes.map((node) => [node, []]));
  for (const leaf of leaves) {
    const node = String(leaf.path[0] ?? "");
    groups.set(node, [...(groups.get(node) ?? []), leaf]);
  }
  return [...groups].filter(([node, group]) => group.length > 0 || shownEmpty.has(node)).reverse();
}

/** What the reviewer typed, as the leaf's type: a number stays a number when it still reads as one. */
function typed(original: Leaf["value"], text: string): JsonValue {
  if (typeof original === "number" && text.trim() !== "" && Number.isFinite(Number(text))) return Number(text);
  if (original === null && text === "") return null;
  return text;
}

/** Whether a node's output has an extract's shape, its values by field name in `fields`. */
function isExtractOutput(output: JsonValue | undefined): output is JsonObject & { fields: JsonObject } {
  if (output === undefined || output === null || typeof output !== "object" || Array.isArray(output)) return false;
  const { fields } = output;
  return fields !== null && typeof fields === "object" && !Array.isArray(fields);
}

/** The fields an extract step did not find, by node: `missing` beside `fields` in its output. */
function missingFieldsOf(data: JsonObject): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const [node, output] of Object.entries(data)) {
    if (!isExtractOutput(output) || !Array.isArray(output.missing)) continue;
    const names = output.missing.filter((name): name is string => typeof name === "string");
    if (names.length > 0) found.set(node, names);
  }
  return found;
}

/**
 * The data with a value the reviewer typed for a field the step did not find: in `fields`, and
 * out of `missing` (back in it when the value is cleared). `missing` is the step's own list.
 */
function withFoundValue(data: JsonValue, node: string, name: string, missing: readonly string[], text: string): JsonValue {
  const object = data as JsonObject;
  const output = object[node] as JsonObject;
  const { [name]: _old, ...fields } = output.fields as JsonObject;
  const filled = { ...fields, ...(text === "" ? {} : { [name]: text }) };
  return { ...object, [node]: { ...output, fields: filled, missing: missing.filter((other) => !Object.hasOwn(filled, other)) } };
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
  return (
    <p className="muted">
      {name}: this format is not shown in the browser.{" "}
      <a href={shown.url} download={name}>
        Download {name}
      </a>
    </p>
  );
}

/** One run in review: its document beside its data as a form, with Approve (and the corrections) and Reject (with a comment). */
export function ReviewRunPage({ org, runId }: { org: string; runId: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(RunService);
  const run = useQuery(getRun, { organizationId: org, runId });
  const waiting = run.data?.run?.steps.find((step) => step.status === StepStatus.WAITING);
  const shownData = (waiting?.output?.data ?? {}) as JsonObject;
  const { file: _file, ...editable } = shownData;
  const [data, setData] = useState<JsonValue | undefined>(undefined);
  const [comment, setComment] = useState("");
  const [asJson, setAsJson] = useState(false);
  const resolve = useMutation(resolveReview, {
    onSuccess: async () => {
      await invalidate();
      location.assign(routeHash({ page: "review", org, runId: "" }));
    },
  });
  if (run.error) return <ErrorNotice error={run.error} />;
  if (run.data?.run === undefined) return <p className="loading">Loading…</p>;
  const current = data ?? (editable as JsonValue);
  // As the step left them: a field stays in the form while it is typed, and leaves it when cleared.
  const missing = missingFieldsOf(editable);
  const extracted = new Set(run.data.run.steps.filter((step) => step.nodeType === NodeType.EXTRACT).map((step) => step.nodeId));
  const isMissingLeaf = ([node, part, field]: Leaf["path"]) =>
    missing.has(String(node)) && (part === "missing" || (part === "fields" && missing.get(String(node))!.includes(String(field))));
  const leaves = leavesOf(current).filter((leaf) => !isMissingLeaf(leaf.path));
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
              {asJson || leaves.length > MAX_FIELDS ? (
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
                // One group per node, the latest first. Open: the latest (what stopped the run, such as a
                // validate's errors) and every extract's (the values a person corrects).
                groupsOf(leaves, Object.keys(current as JsonObject), new Set(missing.keys())).map(([node, group], index) => (
                  <details key={node} open={index === 0 || extracted.has(node)}>
                    <summary>{node}</summary>
                    {missing.get(node)?.map((field) => {
                      const label = `${node}.fields.${field}`;
                      const value = ((current as JsonObject)[node] as JsonObject).fields as JsonObject;
                      return (
                        <Field key={label} label={label} hint="Not found in the document: type it to add it.">
                          {(control) => (
                            <input
                              {...control}
                              value={typeof value[field] === "string" ? (value[field] as string) : ""}
                              onChange={(event) => setData(withFoundValue(current, node, field, missing.get(node)!, event.target.value))}
                            />
                          )}
                        </Field>
                      );
                    })}
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
              {may("runs.review") && (
                <div className="actions">
                  <button type="submit" className="primary" disabled={resolve.isPending}>
                    Approve
                  </button>
                  {!asJson && leaves.length <= MAX_FIELDS && (
                    <button type="button" onClick={() => setAsJson(true)}>
                      Edit as JSON
                    </button>
                  )}
                </div>
              )}
            </form>
            {!may("runs.review") ? (
              <p className="notice">Your role in this organization lets you read runs, not decide reviews.</p>
            ) : (
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
            )}
          </div>
        </div>
      )}
    </section>
  );
}
