import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { type ApiKey, ApiKeyState } from "../../../gen/docpipe/v1/key_pb.js";
import { createKey, deactivateKey, deleteKey, listKeys, reactivateKey } from "../../../gen/docpipe/v1/key_service-KeyService_connectquery.js";
import { Badge, ConfirmDialog, CopyButton, DataTable, ErrorNotice, Field, LoadMore, Modal } from "../components.tsx";
import { describeError } from "../errors.ts";
import { endOfDay, enumLabel, formatTime } from "../format.ts";
import { KeyService } from "../../../gen/docpipe/v1/key_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { usePagedList } from "../paged-list.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";

const STATE_TONES = {
  [ApiKeyState.ACTIVE]: "good",
  [ApiKeyState.DEACTIVATED]: "warn",
  [ApiKeyState.EXPIRED]: "bad",
  [ApiKeyState.UNSPECIFIED]: "neutral",
} as const;

type Pending = { action: "deactivate" | "delete"; key: ApiKey } | undefined;

/** Settings -> API keys: the organization's keys, New API Key, and each key's Deactivate / Reactivate / Delete. */
export function KeysPage({ org }: { org: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(KeyService);
  const keys = usePagedList(listKeys, { organizationId: org, pageSize: 100 }, (page) => page.keys);
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<Pending>(undefined);
  const refresh = () => invalidate();
  const deactivate = useMutation(deactivateKey, {
    onSuccess: () => {
      setPending(undefined);
      return refresh();
    },
  });
  const reactivate = useMutation(reactivateKey, { onSuccess: refresh });
  const remove = useMutation(deleteKey, {
    onSuccess: () => {
      setPending(undefined);
      return refresh();
    },
  });

  return (
    <section aria-labelledby="keys-title">
      <div className="page-head">
        <h1 id="keys-title">API keys</h1>
        {may("keys.write") && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New API Key
          </button>
        )}
      </div>
      <p className="muted">Programs send a key in the X-Api-Key header when they submit documents to a pipe.</p>
      <ErrorNotice error={keys.error ?? reactivate.error} />
      <DataTable
        label="API keys"
        rows={keys.items}
        rowKey={(key) => key.id}
        empty="No API keys yet. Create one with New API Key, then give it to the program that submits documents."
        columns={[
          { header: "Name", rowHeader: true, cell: (key) => key.name },
          { header: "Key", cell: (key) => <code>{key.hint}</code> },
          { header: "State", cell: (key) => <Badge tone={STATE_TONES[key.state]}>{enumLabel(ApiKeyState, key.state)}</Badge> },
          { header: "Created", cell: (key) => formatTime(key.createTime) },
          { header: "Expires", cell: (key) => formatTime(key.expireTime) || "Never" },
          { header: "Last used", cell: (key) => formatTime(key.lastUsedTime) || "Never" },
          {
            header: "Actions",
            hiddenHeader: true,
            className: "row-actions",
            cell: (key) => (
              <>
                {may("keys.write") && (
                  <>
                    {key.state === ApiKeyState.ACTIVE && (
                      <button
                        type="button"
                        aria-label={`Deactivate ${key.name}`}
                        onClick={() => {
                          deactivate.reset();
                          setPending({ action: "deactivate", key });
                        }}
                      >
                        Deactivate
                      </button>
                    )}
                    {key.state === ApiKeyState.DEACTIVATED && (
                      <button
                        type="button"
                        aria-label={`Reactivate ${key.name}`}
                        disabled={reactivate.isPending}
                        onClick={() => reactivate.mutate({ organizationId: org, keyId: key.id })}
                      >
                        Reactivate
                      </button>
                    )}
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${key.name}`}
                      onClick={() => {
                        remove.reset();
                        setPending({ action: "delete", key });
                      }}
                    >
                      Delete
                    </button>
                  </>
                )}
              </>
            ),
          },
        ]}
      />
      <LoadMore query={keys.query} />
      {creating && <NewKeyDialog org={org} onClose={() => setCreating(false)} />}
      {pending?.action === "deactivate" && (
        <ConfirmDialog
          title={`Deactivate “${pending.key.name}”?`}
          confirmLabel="Deactivate"
          pending={deactivate.isPending}
          error={deactivate.error}
          onCancel={() => setPending(undefined)}
          onConfirm={() => deactivate.mutate({ organizationId: org, keyId: pending.key.id })}
        >
          <p>Requests with this key are refused until you reactivate it.</p>
        </ConfirmDialog>
      )}
      {pending?.action === "delete" && (
        <ConfirmDialog
          title={`Delete “${pending.key.name}”?`}
          confirmLabel="Delete key"
          danger
          pending={remove.isPending}
          error={remove.error}
          onCancel={() => setPending(undefined)}
          onConfirm={() => remove.mutate({ organizationId: org, keyId: pending.key.id })}
        >
          <p>
            The key <code>{pending.key.hint}</code> stops working at once and is removed. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** Name and Expiration date; on create the key's value is shown this once, and forgotten when the dialog closes. */
function NewKeyDialog({ org, onClose }: { org: string; onClose: () => void }) {
  const invalidate = useInvalidate(KeyService);
  const [name, setName] = useState("");
  const [expires, setExpires] = useState("");
  const create = useMutation(createKey, { onSuccess: () => invalidate() });
  const submit = useSingleFlight(() =>
    create.mutateAsync({ organizationId: org, name, expireTime: expires === "" ? undefined : timestampFromDate(endOfDay(expires)) }),
  );
  const problem = create.error ? describeError(create.error) : undefined;
  const fieldError = (field: string) => (problem?.field === field ? problem.message : undefined);

  if (create.data) {
    return (
      <Modal title="Your new API key" onClose={onClose}>
        <p className="notice warn">Copy the key now: you will not see it again.</p>
        <Field label={`Key for “${create.data.key?.name ?? name}”`}>
          {(control) => <input {...control} className="secret" readOnly value={create.data.keyValue} onFocus={(event) => event.target.select()} />}
        </Field>
        <div className="actions">
          <CopyButton text={create.data.keyValue} label="Copy key" />
          <button type="button" className="primary" onClick={onClose}>
            Done
          </button>
        </div>
      </Modal>
    );
  }
  return (
    <Modal title="New API Key" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Field label="Name" hint="Say who uses it, e.g. CI uploader." error={fieldError("name")}>
          {(control) => <input {...control} required value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field
          label="Expiration date"
          hint="Optional. The key works through this day; leave blank for a key that never expires."
          error={fieldError("expire_time")}
        >
          {(control) => <input {...control} type="date" value={expires} onChange={(event) => setExpires(event.target.value)} />}
        </Field>
        {problem && fieldError("name") === undefined && fieldError("expire_time") === undefined && <ErrorNotice error={create.error} />}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create key
          </button>
        </div>
      </form>
    </Modal>
  );
}
