import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type FormEvent, type InputHTMLAttributes, lazy, Suspense, useState } from "react";
import { CallbackMethod, type Pipe, type Pipeline, PipeState } from "../../../gen/docpipe/v1/pipe_pb.js";
import { activatePipe, createPipe, deletePipe, getPipe, pausePipe, updatePipe } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { RunStatus } from "../../../gen/docpipe/v1/run_pb.js";
import type { Workspace } from "../../../gen/docpipe/v1/workspace_pb.js";
import { Badge, ConfirmDialog, CopyButton, ErrorNotice, Field } from "../components.tsx";
import { describeError } from "../errors.ts";
import { enumLabel } from "../format.ts";
import {
  emptyPipelineForm,
  FORMATS,
  formFieldOf,
  formShows,
  fromPipeline,
  type PipelineForm,
  pipelineFromJson,
  pipelineJson,
  toPipeline,
} from "../pipeline-form.ts";
import { routeHash } from "../route.ts";
import { useSettings } from "../settings.ts";
import { PIPE_STATE_TONES } from "../pipe-states.ts";
import { PipeService } from "../../../gen/docpipe/v1/pipe_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";
import { refusedNode } from "../pipeline-graph.ts";

/** The canvas and its graph libraries load when a pipe is edited on it, not with the console's first page. */
const PipeCanvas = lazy(() => import("./PipeCanvas.tsx"));
/** A pipe's versions and their differences load when they are opened. */
const PipeVersions = lazy(() => import("./PipeVersions.tsx"));

interface Props {
  org: string;
  pipeId: string;
  workspaceId: string;
  workspaces: Workspace[];
  defaultWorkspaceId: string;
}

/** A new pipe, or an existing one loaded first. */
export function PipeEditor(props: Props) {
  const existing = useQuery(getPipe, { organizationId: props.org, pipeId: props.pipeId }, { enabled: props.pipeId !== "new" });
  if (props.pipeId === "new") return <PipeForm {...props} pipe={undefined} />;
  if (existing.error) return <ErrorNotice error={existing.error} />;
  if (existing.data?.pipe === undefined) return <p className="loading">Loading…</p>;
  return <PipeForm {...props} pipe={existing.data.pipe} />;
}

function PipeForm({ org, pipe, workspaceId, workspaces, defaultWorkspaceId }: Props & { pipe: Pipe | undefined }) {
  const may = usePermissions(org);
  // A role that may not change pipes reads the form: its controls are disabled, its JSON read-only.
  const readOnly = !may("pipes.write");
  const invalidate = useInvalidate(PipeService);
  const [name, setName] = useState(pipe?.name ?? "");
  const [description, setDescription] = useState(pipe?.description ?? "");
  const [retentionDays, setRetentionDays] = useState(String(pipe?.retentionDays ?? 0));
  const [workspace, setWorkspace] = useState(pipe?.workspaceId ?? (workspaceId || defaultWorkspaceId));
  const [form, setForm] = useState<PipelineForm>(pipe ? fromPipeline(pipe.pipeline) : emptyPipelineForm());
  // The pipeline as JSON while it is edited so: always when the form cannot show all of it.
  // The pipeline on the canvas while it is edited so: at first when the form cannot show all of it.
  const [canvas, setCanvas] = useState<Pipeline | undefined>(
    pipe && !formShows(pipe.pipeline) ? (pipe.pipeline ?? toPipeline(emptyPipelineForm())) : undefined,
  );
  const [json, setJson] = useState<string | undefined>(undefined);
  const [jsonError, setJsonError] = useState<string | undefined>(undefined);
  const [sent, setSent] = useState<Pipeline | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const [versionsOpen, setVersionsOpen] = useState(false);
  // A restored version replaces what the editor shows, in the view it is shown in.
  const showRestored = (pipeline: Pipeline) => {
    setJson(undefined);
    setSent(undefined);
    if (canvas === undefined && formShows(pipeline)) setForm(fromPipeline(pipeline));
    else setCanvas(pipeline);
  };
  const refresh = () => invalidate();
  const create = useMutation(createPipe, {
    onSuccess: (response) => {
      void refresh();
      location.replace(routeHash({ page: "pipe", org, pipeId: response.pipe!.id }));
    },
  });
  const createOnce = useSingleFlight((input: Parameters<typeof create.mutateAsync>[0]) => create.mutateAsync(input));
  const update = useMutation(updatePipe, {
    onSuccess: () => {
      setSaved(true);
      return refresh();
    },
  });
  const save = pipe ? update : create;

  const problem = save.error ? describeError(save.error) : undefined;
  const errorField = problem?.field === undefined || sent === undefined ? problem?.field : formFieldOf(problem.field, sent);
  const fieldError = (field: string) => (errorField === field ? problem?.message : undefined);
  const refused = canvas === undefined || json !== undefined ? undefined : refusedNode(problem?.field);
  // Node indexes refer to the pipeline that was sent: the canvas marks that node by its id.
  const canvasProblem =
    refused === undefined || problem === undefined ? undefined : { nodeId: sent?.nodes[refused]?.id ?? "", message: problem.message, field: problem.field };
  const shownBesideField = (errorField !== undefined && FIELDS.includes(errorField)) || canvasProblem !== undefined;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let pipeline: Pipeline;
    try {
      pipeline = json !== undefined ? pipelineFromJson(json) : (canvas ?? toPipeline(form));
    } catch (error) {
      setJsonError(`Not a pipeline: ${(error as Error).message}`);
      return;
    }
    setJsonError(undefined);
    setSent(pipeline);
    setSaved(false);
    // Sent as typed (a blank is 0, keep every run): the service says what is out of range.
    const retention = Number(retentionDays.trim() === "" ? "0" : retentionDays);
    if (pipe) update.mutate({ organizationId: org, pipeId: pipe.id, name, description, pipeline, retentionDays: retention });
    else createOnce({ organizationId: org, workspaceId: workspace, name, description, pipeline, retentionDays: retention });
  };
  const setTrigger = (change: Partial<PipelineForm["trigger"]>) => setForm({ ...form, trigger: { ...form.trigger, ...change } });
  const setCallback = (change: Partial<PipelineForm["callback"]>) => setForm({ ...form, callback: { ...form.callback, ...change } });
  const toggleFormat = (format: string, on: boolean) =>
    setTrigger({
      acceptedFormats: on
        ? FORMATS.filter((known) => known === format || form.trigger.acceptedFormats.includes(known))
        : form.trigger.acceptedFormats.filter((known) => known !== format),
    });

  return (
    <section aria-labelledby="pipe-title">
      <div className="page-head">
        <h1 id="pipe-title">{pipe ? pipe.name : "New pipe"}</h1>
        {pipe && <Badge tone={PIPE_STATE_TONES[pipe.state]}>{enumLabel(PipeState, pipe.state)}</Badge>}
      </div>
      {pipe && <PipeActions org={org} pipe={pipe} />}
      <form onSubmit={submit} className="editor">
        <fieldset disabled={readOnly}>
          <legend>Pipe</legend>
          <Field label="Name" error={fieldError("name")}>
            {(control) => <input {...control} required value={name} onChange={(event) => setName(event.target.value)} />}
          </Field>
          <Field label="Description" error={fieldError("description")}>
            {(control) => <textarea {...control} rows={2} value={description} onChange={(event) => setDescription(event.target.value)} />}
          </Field>
          <Field
            label="Keep runs for (days)"
            hint="Runs, their steps and documents older than this are deleted. 0 keeps every run."
            error={fieldError("retention_days")}
          >
            {(control) => <WholeNumberInput {...control} min={0} value={retentionDays} onChange={(event) => setRetentionDays(event.target.value)} />}
          </Field>
          <Field label="Workspace" error={fieldError("workspace_id")} hint={pipe ? "A pipe stays in the workspace it was created in." : undefined}>
            {(control) => (
              <select {...control} value={workspace} disabled={pipe !== undefined} onChange={(event) => setWorkspace(event.target.value)}>
                {workspaces.map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>
                    {candidate.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </fieldset>

        {json !== undefined ? (
          <fieldset>
            <legend>Pipeline</legend>
            <Field
              label="Pipeline (JSON)"
              hint="Every node, as PipeService takes it (docs/pipelines.md). Callback header values are stored sealed, as from the form."
              error={jsonError ?? (errorField?.startsWith("pipeline") ? problem?.message : undefined)}
            >
              {(control) => (
                <textarea
                  {...control}
                  className="code"
                  rows={24}
                  spellCheck={false}
                  readOnly={readOnly}
                  value={json}
                  onChange={(event) => setJson(event.target.value)}
                />
              )}
            </Field>
            <div className="actions start">
              <CanvasModeSwitch
                json={json}
                onCanvas={(pipeline) => {
                  setCanvas(pipeline);
                  setJson(undefined);
                }}
              />
              <FormModeSwitch
                json={json}
                onForm={(pipeline) => {
                  setForm(fromPipeline(pipeline));
                  setCanvas(undefined);
                  setJson(undefined);
                }}
              />
            </div>
          </fieldset>
        ) : canvas !== undefined ? (
          <fieldset>
            <legend>Pipeline</legend>
            <Suspense fallback={<p className="loading">Loading the canvas…</p>}>
              <PipeCanvas
                pipeline={canvas}
                onChange={setCanvas}
                readOnly={readOnly}
                problem={canvasProblem}
                tryIt={pipe && { org, pipeId: pipe.id, testMode: pipe.testMode, mayChange: !readOnly }}
              />
            </Suspense>
            <div className="actions start">
              <button type="button" onClick={() => setJson(pipelineJson(canvas))}>
                Edit as JSON
              </button>
              {formShows(canvas) && (
                <button
                  type="button"
                  onClick={() => {
                    setForm(fromPipeline(canvas));
                    setCanvas(undefined);
                  }}
                >
                  Edit with the form
                </button>
              )}
            </div>
          </fieldset>
        ) : (
          <>
            <fieldset disabled={readOnly}>
              <legend>1. HTTP trigger</legend>
              <fieldset className="checkboxes" aria-describedby={fieldError("httpTrigger.accepted_formats") ? "formats-error" : undefined}>
                <legend>Accepted formats</legend>
                {FORMATS.map((format) => (
                  <label key={format}>
                    <input
                      type="checkbox"
                      checked={form.trigger.acceptedFormats.includes(format)}
                      onChange={(event) => toggleFormat(format, event.target.checked)}
                    />
                    {format}
                  </label>
                ))}
                {fieldError("httpTrigger.accepted_formats") && (
                  <small id="formats-error" className="field-error">
                    {fieldError("httpTrigger.accepted_formats")}
                  </small>
                )}
              </fieldset>
              <Field label="Max size (MB)" hint="1 MB = 1,048,576 bytes." error={fieldError("httpTrigger.max_size_mb")}>
                {(control) => (
                  <WholeNumberInput
                    {...control}
                    min={1}
                    required
                    value={form.trigger.maxSizeMb}
                    onChange={(event) => setTrigger({ maxSizeMb: event.target.value })}
                  />
                )}
              </Field>
              <Field
                label="Allowed origins"
                hint="Web pages allowed to submit from a browser, one origin per line (https://app.example.com). Blank: none."
                error={fieldError("httpTrigger.allowed_origins")}
              >
                {(control) => (
                  <textarea
                    {...control}
                    rows={2}
                    value={form.trigger.allowedOrigins}
                    onChange={(event) => setTrigger({ allowedOrigins: event.target.value })}
                  />
                )}
              </Field>
            </fieldset>

            <fieldset disabled={readOnly}>
              <legend>2. Parse</legend>
              <label className="inline">
                <input
                  type="checkbox"
                  checked={form.parse.enabled}
                  onChange={(event) => setForm({ ...form, parse: { ...form.parse, enabled: event.target.checked } })}
                />
                Extract the document's text and metadata
              </label>
              {form.parse.enabled && (
                <label className="inline">
                  <input
                    type="checkbox"
                    checked={form.parse.rulingLines}
                    onChange={(event) => setForm({ ...form, parse: { ...form.parse, rulingLines: event.target.checked } })}
                  />
                  Read tables drawn with ruling lines in PDFs (about 40 % more parse time per page)
                </label>
              )}
            </fieldset>

            <fieldset disabled={readOnly}>
              <legend>3. Callback</legend>
              <label className="inline">
                <input type="checkbox" checked={form.callback.enabled} onChange={(event) => setCallback({ enabled: event.target.checked })} />
                Send the result to a URL
              </label>
              {form.callback.enabled && (
                <div className="grid">
                  <Field label="Callback URL" error={fieldError("callback.url")}>
                    {(control) => (
                      <input {...control} type="url" required value={form.callback.url} onChange={(event) => setCallback({ url: event.target.value })} />
                    )}
                  </Field>
                  <Field label="Method" error={fieldError("callback.method")}>
                    {(control) => (
                      <select
                        {...control}
                        value={form.callback.method}
                        onChange={(event) => setCallback({ method: Number(event.target.value) as CallbackMethod })}
                      >
                        {[CallbackMethod.POST, CallbackMethod.PUT, CallbackMethod.PATCH].map((method) => (
                          <option key={method} value={method}>
                            {CallbackMethod[method]}
                          </option>
                        ))}
                      </select>
                    )}
                  </Field>
                  <Field label="Headers" hint="One per line: Name: value" error={fieldError("callback.headers")}>
                    {(control) => (
                      <textarea {...control} rows={2} value={form.callback.headers} onChange={(event) => setCallback({ headers: event.target.value })} />
                    )}
                  </Field>
                  <Field label="Retries" hint="Blank: the default." error={fieldError("callback.retry_count")}>
                    {(control) => (
                      <WholeNumberInput
                        {...control}
                        min={0}
                        value={form.callback.retryCount}
                        onChange={(event) => setCallback({ retryCount: event.target.value })}
                      />
                    )}
                  </Field>
                  <Field label="Timeout (seconds)" hint="Blank: the default." error={fieldError("callback.timeout_seconds")}>
                    {(control) => (
                      <WholeNumberInput
                        {...control}
                        min={0}
                        value={form.callback.timeoutSeconds}
                        onChange={(event) => setCallback({ timeoutSeconds: event.target.value })}
                      />
                    )}
                  </Field>
                </div>
              )}
            </fieldset>

            <div className="actions start">
              <button type="button" onClick={() => setCanvas(toPipeline(form))}>
                Edit on the canvas (every node: route, extract, review, …)
              </button>
              <button type="button" onClick={() => setJson(pipelineJson(toPipeline(form)))}>
                Edit as JSON
              </button>
            </div>
          </>
        )}

        {problem && !shownBesideField && <ErrorNotice error={save.error} />}
        {problem && shownBesideField && canvasProblem === undefined && (
          <p className="notice error" role="alert">
            The pipe was not saved: see the field marked below its label.
          </p>
        )}
        {saved && !save.isPending && (
          <p className="notice good" role="status">
            Saved.
          </p>
        )}
        {!readOnly ? (
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {pipe ? "Save changes" : "Create pipe"}
            </button>
          </div>
        ) : (
          <p className="notice">Your role in this organization lets you read pipes, not change them.</p>
        )}
      </form>
      {pipe && (
        <details className="card" onToggle={(event) => setVersionsOpen(event.currentTarget.open)}>
          <summary>Versions: what changed, restore an earlier one</summary>
          {versionsOpen && (
            <Suspense fallback={<p className="loading">Loading the versions…</p>}>
              <PipeVersions org={org} pipe={pipe} mayChange={!readOnly} onRestored={showRestored} />
            </Suspense>
          )}
        </details>
      )}
    </section>
  );
}

/** Back to the form from JSON, offered when the form can show all of the pipeline typed. */
function FormModeSwitch({ json, onForm }: { json: string; onForm: (pipeline: Pipeline) => void }) {
  let pipeline: Pipeline | undefined;
  try {
    pipeline = pipelineFromJson(json);
  } catch {
    pipeline = undefined;
  }
  if (pipeline === undefined || !formShows(pipeline)) return null;
  const shown = pipeline;
  return (
    <button type="button" onClick={() => onForm(shown)}>
      Edit with the form
    </button>
  );
}

/** To the canvas from JSON, offered when the JSON reads as a pipeline. */
function CanvasModeSwitch({ json, onCanvas }: { json: string; onCanvas: (pipeline: Pipeline) => void }) {
  let pipeline: Pipeline | undefined;
  try {
    pipeline = pipelineFromJson(json);
  } catch {
    return null;
  }
  const shown = pipeline;
  return (
    <button type="button" onClick={() => onCanvas(shown)}>
      Edit on the canvas
    </button>
  );
}

/** The editor fields a service error can be shown beside. */
const FIELDS = [
  "name",
  "description",
  "retention_days",
  "workspace_id",
  "httpTrigger.accepted_formats",
  "httpTrigger.max_size_mb",
  "httpTrigger.allowed_origins",
  "callback.url",
  "callback.method",
  "callback.headers",
  "callback.retry_count",
  "callback.timeout_seconds",
];

/** Activate / Pause / Delete, the trigger URL and a curl command to try it. */
function PipeActions({ org, pipe }: { org: string; pipe: Pipe }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(PipeService);
  const settings = useSettings();
  const [deleting, setDeleting] = useState(false);
  const refresh = () => invalidate();
  const activate = useMutation(activatePipe, { onSuccess: refresh });
  const pause = useMutation(pausePipe, { onSuccess: refresh });
  const remove = useMutation(deletePipe, {
    onSuccess: () => {
      void refresh();
      location.assign(routeHash({ page: "pipes", org }));
    },
  });
  const triggerUrl = `${settings?.edgeUrl ?? "<edge URL>"}/pipes/${pipe.id}/trigger`;
  const curl = `curl -i -H "X-Api-Key: $DOCPIPE_KEY" -F "file=@document.pdf" ${triggerUrl}`;
  // The first node is the trigger: an HTTP trigger has a URL to try, an email trigger an address.
  const trigger = pipe.pipeline?.nodes[0]?.kind.case;

  return (
    <div className="card">
      <div className="actions start">
        {!may("pipes.write") ? null : pipe.state === PipeState.ACTIVE ? (
          <button type="button" onClick={() => pause.mutate({ organizationId: org, pipeId: pipe.id })} disabled={pause.isPending}>
            Pause
          </button>
        ) : (
          <button type="button" className="primary" onClick={() => activate.mutate({ organizationId: org, pipeId: pipe.id })} disabled={activate.isPending}>
            Activate
          </button>
        )}
        <a className="button" href={routeHash({ page: "runs", org, pipeId: pipe.id, status: RunStatus.UNSPECIFIED })}>
          Runs of this pipe
        </a>
        {may("pipes.write") && (
          <button
            type="button"
            className="danger"
            onClick={() => {
              remove.reset();
              setDeleting(true);
            }}
          >
            Delete
          </button>
        )}
      </div>
      <ErrorNotice error={activate.error ?? pause.error} />
      {trigger === "httpTrigger" && (
        <>
          <Field label="Trigger URL">{(control) => <input {...control} readOnly value={triggerUrl} />}</Field>
          <Field label="Try it with curl" hint="Replace $DOCPIPE_KEY with an API key (Settings, API keys).">
            {(control) => <textarea {...control} readOnly rows={2} className="code" value={curl} />}
          </Field>
          <CopyButton text={curl} label="Copy curl command" />
        </>
      )}
      {trigger === "emailTrigger"
        && (settings?.emailDomain === undefined ? (
          <p className="notice">
            This pipe takes documents by email, and this deployment receives no mail: set <code>EMAIL_PORT</code> (and <code>EMAIL_DOMAIN</code>) to start its
            SMTP server, or change the trigger to an HTTP trigger.
          </p>
        ) : (
          <Field label="Email address" hint="Mail a document to it from one of the pipe's allowed senders; each attachment becomes a run.">
            {(control) => <input {...control} readOnly value={`${pipe.id}@${settings.emailDomain}`} />}
          </Field>
        ))}
      {deleting && (
        <ConfirmDialog
          title={`Delete “${pipe.name}”?`}
          confirmLabel="Delete pipe"
          danger
          pending={remove.isPending}
          error={remove.error}
          onCancel={() => setDeleting(false)}
          onConfirm={() => remove.mutate({ organizationId: org, pipeId: pipe.id })}
        >
          <p>The pipe stops accepting documents at once. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/**
 * A field for a whole number: the browser holds a fraction at the field rather than send it (2.5
 * came back as a protobuf decoding error). `min` is also where its steps count from: a controlled
 * input's value attribute would be otherwise, and any value would be a whole step from itself.
 */
function WholeNumberInput({ min, ...props }: InputHTMLAttributes<HTMLInputElement> & { min: number }) {
  return <input {...props} type="number" min={min} step={1} inputMode="numeric" />;
}
