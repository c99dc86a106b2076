import type { JsonValue } from "@bufbuild/protobuf";
import { useInfiniteQuery, useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import type { Pipe, Pipeline } from "../../../gen/docpipe/v1/pipe_pb.js";
import { PipeService } from "../../../gen/docpipe/v1/pipe_service_pb.js";
import { listPipelineVersions, updatePipe } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { ErrorNotice, Field, LoadMore, TableBox } from "../components.tsx";
import { formatTime } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { pipelineDiff, type SettingChange } from "../pipeline-diff.ts";

/** A setting's value as the diff shows it: JSON, or "(not set)". */
function shown(value: JsonValue | undefined): string {
  return value === undefined ? "(not set)" : JSON.stringify(value);
}

/**
 * A pipe's saved pipeline versions, newest first: what changed between any two (nodes added,
 * removed, and each changed node's settings before and after), and an earlier one restored as a new
 * version (UpdatePipe with its pipeline). `onRestored` gets the pipeline restored, for the editor.
 */
export default function PipeVersions({
  org,
  pipe,
  mayChange,
  onRestored,
}: {
  org: string;
  pipe: Pipe;
  mayChange: boolean;
  onRestored: (pipeline: Pipeline) => void;
}) {
  const invalidate = useInvalidate(PipeService);
  const query = useInfiniteQuery(
    listPipelineVersions,
    { organizationId: org, pipeId: pipe.id, pageSize: 50, pageToken: "" },
    { pageParamKey: "pageToken", getNextPageParam: (page) => page.nextPageToken || undefined },
  );
  const versions = query.data?.pages.flatMap((page) => page.pipelineVersions) ?? [];
  const [older, setOlder] = useState<number | undefined>(undefined);
  const [newer, setNewer] = useState<number | undefined>(undefined);
  const [restoring, setRestoring] = useState(0);
  const [restored, setRestored] = useState<{ from: number; to: number } | undefined>(undefined);
  const restore = useMutation(updatePipe, {
    onSuccess: (response) => {
      setRestored({ from: restoring, to: response.pipe?.pipelineVersion ?? 0 });
      if (response.pipe?.pipeline) onRestored(response.pipe.pipeline);
      setOlder(undefined);
      setNewer(undefined);
      return invalidate();
    },
  });
  // By default, the current version against the one before it.
  const newerVersion = newer ?? versions[0]?.version;
  const olderVersion = older ?? versions[1]?.version ?? newerVersion;
  const pick = (number: number | undefined) => versions.find((version) => version.version === number);
  const diff = versions.length === 0 ? undefined : pipelineDiff(pick(olderVersion)?.pipeline, pick(newerVersion)?.pipeline);
  const choices = (label: string, value: number | undefined, set: (version: number) => void) => (
    <Field label={label}>
      {(control) => (
        <select {...control} value={value ?? ""} onChange={(event) => set(Number(event.target.value))}>
          {versions.map((version) => (
            <option key={version.version} value={version.version}>
              {`Version ${version.version}${version.version === pipe.pipelineVersion ? " (current)" : ""}`}
            </option>
          ))}
        </select>
      )}
    </Field>
  );

  return (
    <section className="versions" aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ErrorNotice error={query.error ?? restore.error} />
      {restored && (
        <p className="notice good" role="status">
          Version {restored.from} restored as version {restored.to}.
        </p>
      )}
      <TableBox label="Pipeline versions">
        <table>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Saved</th>
              <th scope="col">Nodes</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {versions.map((version) => (
              <tr key={version.version}>
                <td>
                  {version.version}
                  {version.version === pipe.pipelineVersion && " (current)"}
                </td>
                <td>{formatTime(version.createTime)}</td>
                <td>{version.pipeline?.nodes.length ?? 0}</td>
                <td>
                  {mayChange && version.version !== pipe.pipelineVersion && (
                    <button
                      type="button"
                      className="small"
                      disabled={restore.isPending}
                      onClick={() => {
                        setRestoring(version.version);
                        restore.mutate({ organizationId: org, pipeId: pipe.id, pipeline: version.pipeline });
                      }}
                    >
                      Restore version {version.version}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <LoadMore query={query} />
      {versions.length > 1 && (
        <>
          <h3>What changed</h3>
          <div className="inline-form">
            {choices("From", olderVersion, setOlder)}
            {choices("To", newerVersion, setNewer)}
          </div>
          {diff && <DiffView diff={diff} />}
        </>
      )}
    </section>
  );
}

function DiffView({ diff }: { diff: ReturnType<typeof pipelineDiff> }) {
  if (diff.added.length + diff.removed.length + diff.changed.length + diff.pipeline.length === 0) {
    return <p className="muted">The two versions have the same pipeline.</p>;
  }
  return (
    <ul className="diff">
      {diff.added.map((id) => (
        <li key={`added-${id}`} className="diff-added">
          Node <code>{id}</code> added
        </li>
      ))}
      {diff.removed.map((id) => (
        <li key={`removed-${id}`} className="diff-removed">
          Node <code>{id}</code> removed
        </li>
      ))}
      {diff.changed.map(({ id, changes }) => (
        <li key={`changed-${id}`} className="diff-changed">
          Node <code>{id}</code> changed
          <Changes changes={changes} />
        </li>
      ))}
      {diff.pipeline.length > 0 && (
        <li className="diff-changed">
          Pipeline settings changed
          <Changes changes={diff.pipeline} />
        </li>
      )}
    </ul>
  );
}

function Changes({ changes }: { changes: SettingChange[] }) {
  return (
    <dl className="changes">
      {changes.map((change) => (
        <div key={change.path}>
          <dt>
            <code>{change.path || "(node)"}</code>
          </dt>
          <dd>
            <del>{shown(change.before)}</del> → <ins>{shown(change.after)}</ins>
          </dd>
        </div>
      ))}
    </dl>
  );
}
