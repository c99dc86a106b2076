import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * What a role may do beyond its own objects: nothing. Without SUPERUSER (nor membership in
 * pg_execute_server_program, pg_read_server_files, pg_write_server_files) PostgreSQL refuses
 * `COPY ... PROGRAM` and `COPY ... FILE`, so SQL that reaches the service's connection cannot run
 * commands on the server's machine nor read its files; without CREATEROLE it cannot make a role that
 * could.
 */
const ATTRIBUTES = "login nosuperuser nocreatedb nocreaterole noreplication nobypassrls";

/**
 * Makes `role` (attributes above, a fresh random password each call) and `database` owned by it, over
 * the superuser's connection `adminUrl`; returns the password. A database made before the service had
 * a role of its own (its tables owned by the superuser) is handed to the role, objects and all, so its
 * migrations keep working. The superuser connection is used for this and nothing else.
 */
export async function provisionServiceRole(adminUrl: string, database: string, role: string): Promise<string> {
  const password = randomBytes(18).toString("base64url");
  const admin = new pg.Client({ connectionString: withDatabase(adminUrl, "postgres") });
  await admin.connect();
  let handOver = false;
  try {
    const name = admin.escapeIdentifier(role);
    const { rowCount: roles } = await admin.query("select 1 from pg_roles where rolname = $1", [role]);
    // A password is a literal in these statements (they take no parameters); a base64url one needs no escaping beyond escapeLiteral.
    await admin.query(`${roles === 0 ? "create" : "alter"} role ${name} with ${ATTRIBUTES} password ${admin.escapeLiteral(password)}`);
    const { rows } = await admin.query<{ owner: string }>("select pg_get_userbyid(datdba) as owner from pg_database where datname = $1", [database]);
    if (rows.length === 0) {
      await admin.query(`create database ${admin.escapeIdentifier(database)} owner ${name}`);
    } else if (rows[0]!.owner !== role) {
      await admin.query(`alter database ${admin.escapeIdentifier(database)} owner to ${name}`);
      handOver = true;
    }
  } finally {
    await admin.end();
  }
  if (handOver) await handOverObjects(withDatabase(adminUrl, database), role);
  return password;
}

/**
 * Gives `role` every schema, table, view, sequence, function and type the superuser owns in the
 * database at `url` (outside PostgreSQL's own schemas). REASSIGN OWNED cannot: it refuses to move
 * what the bootstrap superuser owns. Indexes and a column's sequence follow their table.
 */
async function handOverObjects(url: string, role: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ statement: string }>(
      `with system as (select oid from pg_namespace where nspname in ('pg_catalog', 'information_schema') or nspname like 'pg\\_toast%' or nspname like 'pg\\_temp%')
       select format('alter schema %I owner to %I', nspname, $1::text) as statement from pg_namespace
         where nspowner = current_user::regrole and oid not in (select oid from system)
       union all
       select format('alter %s %s owner to %I', case relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view' else 'table' end, c.oid::regclass, $1::text)
         from pg_class c
         where relowner = current_user::regrole and relkind in ('r', 'p', 'v', 'm', 'S') and relnamespace not in (select oid from system)
           and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i') and d.refclassid = 'pg_class'::regclass)
       union all
       select format('alter routine %s owner to %I', p.oid::regprocedure, $1::text) from pg_proc p
         where proowner = current_user::regrole and pronamespace not in (select oid from system)
       union all
       select format('alter type %s owner to %I', t.oid::regtype, $1::text) from pg_type t
         where typowner = current_user::regrole and typnamespace not in (select oid from system)
           and typtype in ('e', 'd', 'r') and typelem = 0`,
      [role],
    );
    await admin.query("begin");
    for (const { statement } of rows) await admin.query(statement);
    await admin.query("commit");
  } finally {
    await admin.end();
  }
}

/** `url` on another database of the same server. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
