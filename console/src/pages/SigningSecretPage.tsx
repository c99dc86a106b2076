import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { SigningSecretState } from "../../../gen/docpipe/v1/signing_secret_pb.js";
import {
  expirePreviousSigningSecret,
  listSigningSecrets,
  rotateSigningSecret,
} from "../../../gen/docpipe/v1/signing_secret_service-SigningSecretService_connectquery.js";
import { Badge, ConfirmDialog, CopyButton, EmptyState, ErrorNotice, Field, Modal, TableBox } from "../components.tsx";
import { enumLabel, formatTime } from "../format.ts";
import { SigningSecretService } from "../../../gen/docpipe/v1/signing_secret_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";

/** The secret callbacks are signed with: rotate (the new value shown once), then complete the rotation. */
export function SigningSecretPage({ org }: { org: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(SigningSecretService);
  const secrets = useQuery(listSigningSecrets, { organizationId: org });
  const [confirming, setConfirming] = useState(false);
  const refresh = () => invalidate();
  const rotate = useMutation(rotateSigningSecret, {
    onSuccess: () => {
      setConfirming(false);
      return refresh();
    },
  });
  const rotateOnce = useSingleFlight(() => rotate.mutateAsync({ organizationId: org }));
  const complete = useMutation(expirePreviousSigningSecret, { onSuccess: refresh });
  const hasPrevious = secrets.data?.secrets.some((secret) => secret.state === SigningSecretState.PREVIOUS) ?? false;

  return (
    <section aria-labelledby="secret-title">
      <h1 id="secret-title">Signing secret</h1>
      <p className="muted">Callbacks carry a signature made with this secret, so receivers can check that docpipe sent them.</p>
      <ErrorNotice error={secrets.error ?? complete.error} />
      {secrets.data?.secrets.length === 0 && <EmptyState>No signing secret yet. Rotate to create one, then give it to your callback receivers.</EmptyState>}
      {secrets.data && secrets.data.secrets.length > 0 && (
        <TableBox label="Signing secrets">
          <table>
            <thead>
              <tr>
                <th scope="col">Secret</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {secrets.data.secrets.map((secret) => (
                <tr key={secret.id}>
                  <th scope="row">
                    <code>{secret.hint}</code>
                  </th>
                  <td>
                    <Badge tone={secret.state === SigningSecretState.CURRENT ? "good" : "warn"}>{enumLabel(SigningSecretState, secret.state)}</Badge>
                  </td>
                  <td>{formatTime(secret.createTime)}</td>
                  <td>{formatTime(secret.expireTime) || "Never"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {may("signing_secrets.write") && (
        <div className="actions start">
          <button
            type="button"
            className="primary"
            onClick={() => {
              rotate.reset();
              setConfirming(true);
            }}
          >
            Rotate secret
          </button>
          {hasPrevious && (
            <button type="button" disabled={complete.isPending} onClick={() => complete.mutate({ organizationId: org })}>
              Complete rotation (stop signing with the previous secret)
            </button>
          )}
        </div>
      )}
      {confirming && (
        <ConfirmDialog
          title="Rotate the signing secret?"
          confirmLabel="Rotate"
          pending={rotate.isPending}
          error={rotate.error}
          onCancel={() => setConfirming(false)}
          onConfirm={rotateOnce}
        >
          <p>Callbacks are signed with both the new and the previous secret until you complete the rotation (or its grace period ends).</p>
        </ConfirmDialog>
      )}
      {rotate.data && (
        <Modal title="Your new signing secret" onClose={() => rotate.reset()}>
          <p className="notice warn">Copy the secret now: you will not see it again.</p>
          <Field label="Signing secret">{(control) => <input {...control} className="secret" readOnly value={rotate.data.secretValue} />}</Field>
          <div className="actions">
            <CopyButton text={rotate.data.secretValue} label="Copy secret" />
            <button type="button" className="primary" onClick={() => rotate.reset()}>
              Done
            </button>
          </div>
        </Modal>
      )}
    </section>
  );
}
