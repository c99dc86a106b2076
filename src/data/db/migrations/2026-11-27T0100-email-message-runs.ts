import { type Kysely, sql } from "kysely";

// A mail server that sent a message and did not get its 250 (the connection dropped after the runs
// were recorded) sends it again, with the same Message-ID: the email trigger then answers with the
// runs the message made before instead of making them twice. This index finds them by pipe and
// Message-ID.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index runs_email_message_idx on runs (pipe_id, (email ->> 'messageId')) where email is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index runs_email_message_idx`.execute(db);
}
