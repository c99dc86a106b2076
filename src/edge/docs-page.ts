/**
 * The human-readable docs page, rendered on the server from the OpenAPI document so the two always
 * agree. One self-contained HTML page: inline styles, no scripts, nothing fetched from elsewhere.
 */
import type { Header, OpenApiDocument, Operation, Parameter, PathItem, Reference, Response, Schema } from "./openapi.ts";

const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** The descriptions' small Markdown subset: `code` within a line, paragraphs split by a blank line. */
function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

function prose(text: string): string {
  return text
    .split("\n\n")
    .map((paragraph) => `<p>${inline(paragraph)}</p>`)
    .join("\n");
}

function isReference(value: object): value is Reference {
  return "$ref" in value;
}

/** Follows a local `#/components/...` reference. */
function resolve<T extends object>(document: OpenApiDocument, value: T | Reference): T {
  if (!isReference(value)) return value;
  return value.$ref.slice(2).split("/").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as T;
}

function table(headings: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = headings.map((heading) => `<th>${heading}</th>`).join("");
  const body = rows.map((cells) => `<tr>${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`).join("\n");
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
const json = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
const anchorOfProblems = (componentName: string) => `problems-${componentName.toLowerCase()}`;

function typeLabel(schema: Schema): string {
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type ?? "any";
  const format = schema.format === undefined ? "" : ` (${schema.format})`;
  const values = schema.enum === undefined ? "" : `: ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`;
  return escapeHtml(type + format + values);
}

/** Rows for a schema's properties, nested ones as `file.name`. */
function propertyRows(schema: Schema, prefix = ""): string[][] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [
    [code(prefix + name), typeLabel(property), schema.required?.includes(name) ? "yes" : "no", inline(property.description ?? "")],
    ...propertyRows(property, `${prefix}${name}.`),
  ]);
}

function parametersTable(parameters: readonly Parameter[]): string {
  return table(
    ["Name", "In", "Required", "Description"],
    parameters.map((parameter) => [code(parameter.name), parameter.in, parameter.required ? "yes" : "no", prose(parameter.description)]),
  );
}

function responsesTable(document: OpenApiDocument, responses: Operation["responses"]): string {
  const rows = Object.entries(responses).map(([status, response]) => {
    const resolved = resolve<Response>(document, response);
    const headers = Object.keys(resolved.headers ?? {}).map(code).join(", ");
    const problemsLink = isReference(response) ? ` <a href="#${anchorOfProblems(response.$ref.split("/").pop()!)}">problem types</a>` : "";
    const mediaTypes = Object.keys(resolved.content ?? {}).map(code).join(", ");
    return [`<b>${status}</b>`, prose(resolved.description) + problemsLink, mediaTypes, headers];
  });
  return table(["Status", "Meaning", "Body", "Headers"], rows);
}

/** Examples of the operation's own (not shared) responses, such as the 202 body. */
function inlineExamples(responses: Operation["responses"]): string {
  return Object.entries(responses)
    .flatMap(([status, response]) => (isReference(response) ? [] : Object.values(response.content ?? {}).flatMap((media) =>
      Object.values(media.examples ?? {}).map((example) => `<p>Example ${status}: ${escapeHtml(example.summary)}</p>${json(example.value)}`))))
    .join("\n");
}

function operationSection(document: OpenApiDocument, method: string, paths: readonly string[], operation: Operation): string {
  const body = operation.requestBody;
  const bodySchema = body === undefined ? undefined : Object.entries(body.content)[0];
  return `<section class="operation">
<h3>${paths.map((path) => `<span class="method">${method.toUpperCase()}</span> ${code(path)}`).join("<br>")}</h3>
<p><b>${escapeHtml(operation.summary)}</b>${operation.security === undefined ? " (no key needed)" : ""}</p>
${prose(operation.description)}
${operation.parameters === undefined ? "" : `<h4>Parameters</h4>\n${parametersTable(operation.parameters)}`}
${bodySchema === undefined ? "" : `<h4>Request body: ${code(bodySchema[0])}</h4>\n${prose(body!.description)}\n${table(["Part", "Type", "Required", "Description"], propertyRows(resolve<Schema>(document, bodySchema[1].schema)))}`}
<h4>Responses</h4>
${responsesTable(document, operation.responses)}
${inlineExamples(operation.responses)}
</section>`;
}

/** Paths that share one path item (form A and form B of the trigger) are documented once. */
function pathGroups(document: OpenApiDocument): { paths: string[]; item: PathItem }[] {
  const groups = new Map<string, { paths: string[]; item: PathItem }>();
  for (const [path, item] of Object.entries(document.paths)) {
    const key = isReference(item) ? item.$ref : path;
    const group = groups.get(key) ?? { paths: [], item: resolve<PathItem>(document, item) };
    group.paths.push(path);
    groups.set(key, group);
  }
  return [...groups.values()];
}

function endpointsSection(document: OpenApiDocument): string {
  return pathGroups(document)
    .flatMap(({ paths, item }) => Object.entries(item).map(([method, operation]) => operationSection(document, method, paths, operation)))
    .join("\n");
}

function authenticationSection(document: OpenApiDocument): string {
  return Object.values(document.components.securitySchemes)
    .map((scheme) => `<p>Header ${code(scheme.name)}: ${escapeHtml(scheme.description)}</p>`)
    .join("\n");
}

function headersSection(headers: Readonly<Record<string, Header>>): string {
  return table(["Header", "Type", "Description"], Object.entries(headers).map(([name, header]) => [code(name), typeLabel(header.schema), prose(header.description)]));
}

function problemsSection(document: OpenApiDocument): string {
  const problem = document.components.schemas.Problem!;
  const byStatus = Object.entries(document.components.responses).map(([name, response]) => {
    const examples = Object.entries(response.content?.["application/problem+json"]?.examples ?? {});
    const status = examples[0]?.[1].value as { status: number } | undefined;
    return `<h3 id="${anchorOfProblems(name)}">${status?.status ?? name}</h3>
${examples.map(([problemCode, example]) => `<h4>${code(problemCode)}: ${escapeHtml(example.summary)}</h4>\n${json(example.value)}`).join("\n")}`;
  });
  return `${prose(problem.description ?? "")}
${table(["Member", "Type", "Always", "Description"], propertyRows(problem))}
${byStatus.join("\n")}`;
}

/** Ready-to-run examples for the trigger; they are run against the edge by the tests. */
export function curlExamples(document: OpenApiDocument): string[] {
  const [path] = pathGroups(document).find(({ item }) => item.post?.security !== undefined)!.paths;
  const url = `"$DOCPIPE_URL${path!.replace("{pipeId}", "$PIPE_ID")}"`;
  const keyHeader = `-H "${document.components.securitySchemes.ApiKey!.name}: $DOCPIPE_API_KEY"`;
  const file = '-F "file=@invoice.pdf;type=application/pdf"';
  return [
    `curl -i ${url} \\\n  ${keyHeader} \\\n  ${file}`,
    `curl -i ${url} \\\n  ${keyHeader} \\\n  -H "X-Workspace-Id: $WORKSPACE_ID" \\\n  -H "Idempotency-Key: invoice-2026-0042" \\\n  ${file}`,
  ];
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2327}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f4f5f7;padding:.75rem;overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #d7dbe0;padding:.3rem .5rem;text-align:left;vertical-align:top}
td p{margin:0 0 .3rem}.method{background:#1d6fd6;color:#fff;padding:0 .4rem;border-radius:3px;font-size:13px}
.operation{border-top:2px solid #d7dbe0;margin-top:1.5rem}`;

/** The whole page. */
export function renderDocsPage(document: OpenApiDocument): string {
  const { info } = document;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
${prose(info.description)}
<nav><a href="#authentication">Authentication</a> · <a href="#endpoints">Endpoints</a> · <a href="#accepted">202 body</a> ·
<a href="#headers">Response headers</a> · <a href="#problems">Problems</a> · <a href="#examples">Examples</a></nav>
<h2 id="authentication">Authentication</h2>
${authenticationSection(document)}
<h2 id="endpoints">Endpoints</h2>
${endpointsSection(document)}
<h2 id="accepted">202 body</h2>
${prose(document.components.schemas.Accepted!.description ?? "")}
${table(["Field", "Type", "Always", "Description"], propertyRows(document.components.schemas.Accepted!))}
<h2 id="headers">Response headers</h2>
${headersSection(document.components.headers)}
<h2 id="problems">Problems</h2>
${problemsSection(document)}
<h2 id="examples">Examples</h2>
<p>Set ${code("DOCPIPE_URL")} to the service's address, ${code("DOCPIPE_API_KEY")} to your key and ${code("PIPE_ID")} to the pipe
(and, for the second, ${code("WORKSPACE_ID")} to one of your organization's workspaces).</p>
${curlExamples(document).map((example) => `<pre>${escapeHtml(example)}</pre>`).join("\n")}
</body>
</html>
`;
}
