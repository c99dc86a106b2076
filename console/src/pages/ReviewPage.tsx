import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type FormEvent, lazy, Suspense, useEffect, useId, useRef, useState } from "react";
import { ReviewDecision } from "../../../gen/docpipe/v1/pipe_pb.js";
import { getPipelineVersion } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { RunStatus, StepStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { getRun, listRuns, resolveReview } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { RunService } from "../../../gen/docpipe/v1/run_service_pb.js";
import { DataTable, ErrorNotice, Field, LoadMore } from "../components.tsx";
import { formatTime } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { usePagedList } from "../paged-list.ts";
import { routeHash } from "../route.ts";
import { consoleHeaders } from "../transport.ts";
import { usePermissions } from "../permissions.ts";
import { editKey, extractNodesOf, type FieldEdit, isExtractOutput, type ReviewField, reviewFields, valueText, withEdits } from "../review-fields.ts";
import { DocumentMarks, type Mark } from "./DocumentMarks.tsx";

/** pdf.js (about a megabyte) is loaded when a PDF is first shown, not with the console. */
const PdfPages = lazy(() => import("./PdfPages.tsx"));

/** The runs waiting for a person's review, oldest decisions first to take. */
export function ReviewQueuePage({ org }: { org: string }) {
  const runs = usePagedList(listRuns, { organizationId: org, status: RunStatus.REVIEW, pageSize: 50 }, (page) => page.runs);
  return (
    <section aria-labelledby="review-title">
      <div className="page-head">
        <h1 id="review-title">Review</h1>
      </div>
      <ErrorNotice error={runs.error} />
      <DataTable
        label="Runs waiting for a review"
        rows={runs.items}
        rowKey={(run) => run.id}
        empty="No run waits for a review. Runs stop here when a pipe's review node asks for a person."
        columns={[
          { header: "Document", rowHeader: true, className: "file-name", cell: (run) => run.file?.name },
          { header: "Created", cell: (run) => formatTime(run.createTime) },
          {
            header: "Action",
            hiddenHeader: true,
            className: "file-name",
            cell: (run) => <a href={routeHash({ page: "review", org, runId: run.id })}>Review {run.file?.name}</a>,
          },
        ]}
      />
      <LoadMore query={runs.query} />
    </section>
  );
}

/** A leaf of the run data the reviewer may correct: its path (`validate.errors.0.message`) and value. */
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

/** What the reviewer typed, as the leaf's type: a number stays a number when it still reads as one. */
function typed(original: Leaf["value"], text: string): JsonValue {
  if (typeof original === "number" && text.trim() !== "" && Number.isFinite(Number(text))) return Number(text);
  if (original === null && text === "") return null;
  return text;
}

/** The run's document as fetched: a PDF's bytes, a picture's URL, or another format's URL to download. */
type Fetched = { kind: "pdf"; bytes: ArrayBuffer } | { kind: "image"; url: string } | { kind: "other"; url: string } | { error: string };

function useRunDocument(org: string, runId: string): Fetched | undefined {
  const [fetched, setFetched] = useState<Fetched | undefined>(undefined);
  useEffect(() => {
    let url: string | undefined;
    fetch(`/run-documents/${encodeURIComponent(org)}/${encodeURIComponent(runId)}`, { headers: consoleHeaders() })
      .then(async (response) => {
        if (!response.ok) throw new Error(((await response.json()) as { message?: string }).message ?? `HTTP ${response.status}`);
        const type = response.headers.get("content-type") ?? "";
        if (type === "application/pdf") return setFetched({ kind: "pdf", bytes: await response.arrayBuffer() });
        url = URL.createObjectURL(await response.blob());
        setFetched({ kind: type.startsWith("image/") ? "image" : "other", url });
      })
      .catch((error: unknown) => setFetched({ error: (error as Error).message }));
    return () => {
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [org, runId]);
  return fetched;
}

/** A picture with the marks of the values read on it (its boxes are in the picture's pixels). */
function MarkedImage({ url, name, marks, active }: { url: string; name: string; marks: readonly Mark[]; active: string | undefined }) {
  const [size, setSize] = useState<{ width: number; height: number } | undefined>(undefined);
  return (
    <div className="pages">
      <div className="page">
        <img
          src={url}
          alt={`Document: ${name}`}
          onLoad={(event) => setSize({ width: event.currentTarget.naturalWidth, height: event.currentTarget.naturalHeight })}
        />
        {size !== undefined && <DocumentMarks marks={marks.filter((mark) => mark.page === 1)} width={size.width} height={size.height} active={active} />}
      </div>
    </div>
  );
}

/**
 * The run's document in the page, each value's source marked on it: a PDF's pages rendered by
 * pdf.js, a picture as an image, any other format offered as a download.
 */
function RunDocument({ org, runId, name, marks, active }: { org: string; runId: string; name: string; marks: readonly Mark[]; active: string | undefined }) {
  const fetched = useRunDocument(org, runId);
  if (fetched === undefined) return <p className="loading">Loading the document…</p>;
  if ("error" in fetched) return <p className="notice error">The document cannot be shown: {fetched.error}</p>;
  if (fetched.kind === "pdf") {
    return (
      <Suspense fallback={<p className="loading">Loading the PDF viewer…</p>}>
        <PdfPages bytes={fetched.bytes} name={name} marks={marks} active={active} />
      </Suspense>
    );
  }
  if (fetched.kind === "image") return <MarkedImage url={fetched.url} name={name} marks={marks} active={active} />;
  return (
    <p className="muted">
      {name}: this format is not shown in the browser.{" "}
      <a href={fetched.url} download={name}>
        Download {name}
      </a>
    </p>
  );
}

/** Where a value was read, in words: its page, the label it followed (or the pattern or headers) and the text. */
function provenanceOf(field: ReviewField): string {
  if (field.found === undefined) return field.missing ? "Not found in the document." : "";
  const how = field.found.label === undefined ? `by ${field.found.by}` : `label “${field.found.label}”`;
  return `Page ${field.found.page} · ${how} · “${field.found.text}”`;
}

/** A field's type and whether it is required, as its hint says. */
function typeHint(field: ReviewField): string {
  const required = field.required === true ? ", required" : "";
  return `${field.type}${required}${field.missing ? ", not found: type it to add it" : ""}`;
}

/**
 * One extract field: its name as the label, its value to correct (a yes/no as a choice), its type
 * and its provenance read-only beside it. A table is shown by its rows' count (corrected as JSON).
 */
function ReviewFieldRow(props: { field: ReviewField; edit: string | undefined; onEdit: (value: string) => void; onFocus: () => void }) {
  const { field } = props;
  const id = useId();
  const value = props.edit ?? valueText(field.value);
  const described = `${id}-type ${id}-from`;
  const control =
    field.type === "table" ? (
      <output id={id} aria-describedby={described}>
        {Array.isArray(field.value) ? `${field.value.length} rows` : "none"}
      </output>
    ) : field.type === "yes/no" ? (
      <select id={id} aria-describedby={described} value={value} onFocus={props.onFocus} onChange={(event) => props.onEdit(event.target.value)}>
        <option value="">(none)</option>
        <option value="yes">yes</option>
        <option value="no">no</option>
      </select>
    ) : (
      <input id={id} aria-describedby={described} value={value} onFocus={props.onFocus} onChange={(event) => props.onEdit(event.target.value)} />
    );
  return (
    <div className={field.missing ? "review-field missing" : "review-field"}>
      <div className="field">
        <label htmlFor={id}>{field.name}</label>
        {control}
        <small id={`${id}-type`}>{typeHint(field)}</small>
      </div>
      <p id={`${id}-from`} className="provenance">
        {provenanceOf(field)}
      </p>
    </div>
  );
}

/** Whether a key press is the approve shortcut: Ctrl+Enter (⌘+Enter on a Mac). */
function isApproveShortcut(event: KeyboardEvent): boolean {
  return event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey;
}

/**
 * One run in review: its document with each value's source marked, beside the extract steps'
 * fields (by name and type from the pipe's extract nodes, required and missing first, where each
 * was read beside it) and the rest of the run data; Approve (with the corrections; Ctrl+Enter) opens
 * the next run waiting for a review; Reject takes a comment.
 */
export function ReviewRunPage({ org, runId }: { org: string; runId: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(RunService);
  const run = useQuery(getRun, { organizationId: org, runId });
  const queue = useQuery(listRuns, { organizationId: org, status: RunStatus.REVIEW, pageSize: 50, pageToken: "" });
  const pipeId = run.data?.run?.pipeId ?? "";
  const version = useQuery(
    getPipelineVersion,
    { organizationId: org, pipeId, version: run.data?.run?.pipelineVersion ?? 0 },
    { enabled: pipeId !== "" && may("pipes.read"), retry: false },
  );
  const waiting = run.data?.run?.steps.find((step) => step.status === StepStatus.WAITING);
  const { file: _file, ...editable } = (waiting?.output?.data ?? {}) as JsonObject;
  const [data, setData] = useState<JsonObject | undefined>(undefined);
  const [edits, setEdits] = useState<ReadonlyMap<string, FieldEdit>>(new Map());
  const [comment, setComment] = useState("");
  const [asJson, setAsJson] = useState(false);
  const [active, setActive] = useState<string | undefined>(undefined);
  const form = useRef<HTMLFormElement>(null);
  // The run after this one in the queue (else the first other one), taken when this one is decided.
  const ids = (queue.data?.runs ?? []).map((queued) => queued.id);
  const next = ids[ids.indexOf(runId) + 1] ?? ids.find((id) => id !== runId);
  const resolve = useMutation(resolveReview, {
    onSuccess: async () => {
      await invalidate();
      location.assign(routeHash({ page: "review", org, runId: next ?? "" }));
    },
  });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isApproveShortcut(event) || form.current === null) return;
      event.preventDefault();
      form.current.requestSubmit();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  const firstField = useRef<HTMLFieldSetElement>(null);
  const loaded = waiting !== undefined && (version.data !== undefined || !version.isFetching);
  useEffect(() => {
    // The reviewer starts at the first field (required and missing ones first), and tabs on.
    if (loaded) firstField.current?.querySelector<HTMLElement>("input, select")?.focus();
  }, [loaded]);
  if (run.error) return <ErrorNotice error={run.error} />;
  if (run.data?.run === undefined) return <p className="loading">Loading…</p>;
  const current = withEdits(data ?? editable, edits);
  const settings = extractNodesOf(version.data?.pipelineVersion?.pipeline);
  const extracts = Object.entries(data ?? editable).filter(([, output]) => isExtractOutput(output)) as [string, JsonObject & { fields: JsonObject }][];
  const fields = extracts.flatMap(([node, output]) => reviewFields(node, output, settings.get(node)));
  const marks: Mark[] = fields.flatMap(({ node, name, found }) =>
    found?.box === undefined ? [] : [{ id: editKey(node, name), name: extracts.length > 1 ? `${node}.${name}` : name, page: found.page, box: found.box }],
  );
  const extractIds = new Set(extracts.map(([node]) => node));
  const others = Object.fromEntries(Object.entries(current).filter(([node]) => !extractIds.has(node)));
  const leaves = leavesOf(others);
  const name = run.data.run.file?.name ?? "";
  const edit = (field: ReviewField, value: string) =>
    setEdits(new Map(edits).set(editKey(field.node, field.name), { node: field.node, name: field.name, value }));
  const focus = (field: ReviewField) => {
    const id = editKey(field.node, field.name);
    setActive(id);
    document.querySelector(`.mark[data-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "nearest" });
  };
  const approve = (event: FormEvent) => {
    event.preventDefault();
    if (resolve.isPending || !may("runs.review")) return;
    resolve.mutate({ organizationId: org, runId, decision: ReviewDecision.APPROVE, data: current });
  };
  const reject = (event: FormEvent) => {
    event.preventDefault();
    resolve.mutate({ organizationId: org, runId, decision: ReviewDecision.REJECT, comment });
  };
  const editAsJson = () => {
    setData(current);
    setEdits(new Map());
    setAsJson(true);
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
          <div className="card document-view">
            <RunDocument org={org} runId={runId} name={name} marks={marks} active={active} />
          </div>
          <div>
            <form ref={form} className="card" onSubmit={approve} aria-labelledby="data-title">
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
                          setData(JSON.parse(event.target.value) as JsonObject);
                        } catch {
                          // kept as typed until it is JSON again
                        }
                      }}
                    />
                  )}
                </Field>
              ) : (
                <>
                  {extracts.map(([node]) => (
                    <fieldset key={node} className="review-fields" ref={node === fields[0]?.node ? firstField : undefined}>
                      <legend>Fields read by {node}</legend>
                      {fields
                        .filter((field) => field.node === node)
                        .map((field) => (
                          <ReviewFieldRow
                            key={field.name}
                            field={field}
                            edit={edits.get(editKey(node, field.name))?.value}
                            onEdit={(value) => edit(field, value)}
                            onFocus={() => focus(field)}
                          />
                        ))}
                    </fieldset>
                  ))}
                  {
                    // The other nodes' outputs, the latest first; open: the run's latest node when it is one of
                    // them (what stopped the run, such as a validate's errors).
                    Object.keys(others)
                      .reverse()
                      .map((node) => (
                        <details key={node} open={node === Object.keys(current).at(-1)}>
                          <summary>{node}</summary>
                          {leaves
                            .filter((leaf) => leaf.path[0] === node)
                            .map((leaf) => {
                              const label = leaf.path.join(".");
                              return typeof leaf.value === "boolean" ? (
                                <label key={label} className="inline">
                                  <input
                                    type="checkbox"
                                    checked={leaf.value}
                                    onChange={(event) => setData(withLeaf(current, leaf.path, event.target.checked) as JsonObject)}
                                  />
                                  {label}
                                </label>
                              ) : (
                                <Field key={label} label={label}>
                                  {(control) => (
                                    <input
                                      {...control}
                                      value={leaf.value === null ? "" : String(leaf.value)}
                                      onChange={(event) => setData(withLeaf(current, leaf.path, typed(leaf.value, event.target.value)) as JsonObject)}
                                    />
                                  )}
                                </Field>
                              );
                            })}
                        </details>
                      ))
                  }
                </>
              )}
              {resolve.error && <ErrorNotice error={resolve.error} />}
              {may("runs.review") && (
                <div className="actions">
                  <button type="submit" className="primary" disabled={resolve.isPending} aria-keyshortcuts="Control+Enter">
                    Approve
                  </button>
                  {!asJson && leaves.length <= MAX_FIELDS && (
                    <button type="button" onClick={editAsJson}>
                      Edit as JSON
                    </button>
                  )}
                  <small className="muted">Ctrl+Enter approves and opens the next run waiting for a review.</small>
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
