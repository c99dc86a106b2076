import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { Role } from "../../../gen/docpipe/v1/account_pb.js";
import { createInvitation, listMembers, removeMember, updateMemberRole } from "../../../gen/docpipe/v1/member_service-MemberService_connectquery.js";
import { ConfirmDialog, CopyButton, DataTable, ErrorNotice, Field, LoadMore } from "../components.tsx";
import { describeError } from "../errors.ts";
import { enumLabel, formatTime } from "../format.ts";
import { routeHash } from "../route.ts";
import { MemberService } from "../../../gen/docpipe/v1/member_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { usePagedList } from "../paged-list.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";

const ROLES = [Role.OWNER, Role.ADMIN, Role.MEMBER, Role.REVIEWER, Role.VIEWER];

/** Who belongs to the organization: invite by link, change a role, remove (their sessions end at once). */
export function MembersPage({ org }: { org: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(MemberService);
  const members = usePagedList(listMembers, { organizationId: org, pageSize: 500 }, (page) => page.members);
  const refresh = () => invalidate();
  const change = useMutation(updateMemberRole, { onSuccess: refresh });
  const remove = useMutation(removeMember, { onSuccess: refresh });
  const invite = useMutation(createInvitation);
  const sendInvite = useSingleFlight(() => invite.mutateAsync({ organizationId: org, email, role }));
  const [email, setEmail] = useState("");
  const [role, setRole] = useState(Role.MEMBER);
  const [removing, setRemoving] = useState<{ accountId: string; email: string } | undefined>();
  const problem = invite.error ? describeError(invite.error) : undefined;
  // Only an owner gives, takes or removes the owner role: an admin is offered no control the service would refuse.
  const mayManage = (memberRole: Role) => may("members.write") && (memberRole !== Role.OWNER || may("owners.write"));
  const offered = ROLES.filter((value) => value !== Role.OWNER || may("owners.write"));
  const link = invite.data && `${location.origin}${location.pathname}${routeHash({ page: "invitation", token: invite.data.invitationToken })}`;

  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <ErrorNotice error={members.error ?? change.error} />
      <DataTable
        label="Members"
        rows={members.items}
        rowKey={(member) => member.account!.id}
        columns={[
          {
            header: "Person",
            rowHeader: true,
            cell: (member) => (
              <>
                {member.account!.name} <span className="muted">{member.account!.email}</span>
              </>
            ),
          },
          {
            header: "Role",
            cell: (member) => (
              <select
                aria-label={`Role of ${member.account!.email}`}
                disabled={!mayManage(member.role)}
                value={member.role}
                onChange={(event) => change.mutate({ organizationId: org, accountId: member.account!.id, role: Number(event.target.value) as Role })}
              >
                {(member.role === Role.OWNER ? ROLES : offered).map((value) => (
                  <option key={value} value={value}>
                    {enumLabel(Role, value)}
                  </option>
                ))}
              </select>
            ),
          },
          { header: "Joined", cell: (member) => formatTime(member.createTime) },
          {
            header: "Actions",
            hiddenHeader: true,
            cell: (member) =>
              mayManage(member.role) && (
                <button type="button" onClick={() => setRemoving({ accountId: member.account!.id, email: member.account!.email })}>
                  Remove<span className="visually-hidden"> {member.account!.email}</span>
                </button>
              ),
          },
        ]}
      />
      <LoadMore query={members.query} />
      {may("members.write") && (
        <form
          className="card"
          onSubmit={(event) => {
            event.preventDefault();
            sendInvite();
          }}
        >
          <h2>Invite someone</h2>
          <Field label="Email" error={problem?.field === "email" ? problem.message : undefined}>
            {(control) => <input {...control} type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />}
          </Field>
          <Field label="Role">
            {(control) => (
              <select {...control} value={role} onChange={(event) => setRole(Number(event.target.value) as Role)}>
                {offered.map((value) => (
                  <option key={value} value={value}>
                    {enumLabel(Role, value)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {problem && problem.field === undefined && <ErrorNotice error={invite.error} />}
          <button className="primary" type="submit" disabled={invite.isPending}>
            Create invitation link
          </button>
          {link && (
            <p role="status">
              Send this link to {invite.data!.invitation!.email}; it works once, for 7 days, and is shown only now: <code>{link}</code>{" "}
              <CopyButton text={link} label="Copy link" />
            </p>
          )}
        </form>
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove"
          danger
          pending={remove.isPending}
          error={remove.error}
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => remove.mutate({ organizationId: org, accountId: removing.accountId }, { onSuccess: () => setRemoving(undefined) })}
        >
          They lose access to this organization at once: their open sessions end.
        </ConfirmDialog>
      )}
    </section>
  );
}
