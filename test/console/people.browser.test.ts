/**
 * People in the console, in real Chromium: joining through an invitation link, signing out and in
 * with a password, the members page (invite, change a role, remove), and the headers that keep the
 * page from being framed or forged.
 */
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/docpipe/v1/account_pb.js";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, pageFaults, screenshot, startConsoleServer } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("people in the console", () => {
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  const owner = { email: "ada@example.com", password: "a long enough password" };

  beforeAll(async () => {
    const [started, launched] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    browser = launched;
    organizationId = (await server.clients.workspaces.createOrganization({ name: "Acme People", plan: "basic" })).organization!.id;
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  /** A page of a browser context of its own, signed in through an invitation link as a new account. */
  async function joinInNewBrowser(invitationToken: string, name: string, password: string): Promise<Page> {
    const joined = await (await browser.newContext()).newPage();
    await joined.goto(`${server.internalUrl}/console/#/invitation/${invitationToken}`);
    await joined.getByLabel("Your name").fill(name);
    await joined.getByLabel("Password").fill(password);
    await joined.getByRole("button", { name: "Join" }).click();
    await joined.getByRole("navigation", { name: "Console" }).waitFor();
    return joined;
  }

  it("an invitation link makes an account and opens the organization", async () => {
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: owner.email, role: Role.OWNER });
    await page.goto(`${server.internalUrl}/console/#/invitation/${invitationToken}`);
    await page.getByRole("heading", { level: 1, name: "Join an organization" }).waitFor();
    await expectAccessible(page);
    await page.getByLabel("Your name").fill("Ada Lovelace");
    await page.getByLabel("Password").fill(owner.password);
    await page.getByRole("button", { name: "Join" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === "docpipe_session")).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false });
  });

  it("sign out ends the session; signing in again with the password opens the console", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to docpipe" }).waitFor();
    await expectAccessible(page);
    await screenshot(page, "sign-in");
    await page.getByLabel("Email").fill(owner.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("The email or password is wrong.").waitFor();
    await page.getByLabel("Password").fill(owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
  });

  it("the members page invites by link, changes a role and removes a member, whose session ends at once", async () => {
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: "bob@example.com", role: Role.MEMBER });
    const bob = await joinInNewBrowser(invitationToken, "Bob", "bob's long password");

    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/members`);
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    await page.getByRole("row", { name: /bob@example.com/ }).waitFor();
    await expectAccessible(page);
    await page.getByLabel("Role of bob@example.com").selectOption({ label: "Viewer" });
    await expect
      .poll(async () => (await server.clients.members.listMembers({ organizationId })).members.find((m) => m.account!.email === "bob@example.com")?.role)
      .toBe(Role.VIEWER);

    await page.getByLabel("Email").fill("carol@example.com");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    await page.getByRole("status").filter({ hasText: "#/invitation/" }).waitFor();
    await screenshot(page, "members");

    await page.getByRole("button", { name: "Remove bob@example.com" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => page.getByRole("row", { name: /bob@example.com/ }).count()).toBe(0);
    await bob.reload();
    await bob.getByRole("heading", { level: 1, name: "Sign in to docpipe" }).waitFor();
  });

  it("a viewer sees no button the role may not use (New pipe, Save, Activate, Delete), a notice instead and a form that takes no typing; an owner sees them", async () => {
    const { pipe } = await server.clients.pipes.createPipe({
      organizationId,
      name: "Read-only intake",
      pipeline: { nodes: [{ id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 5 } } }] },
    });
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: "vic@example.com", role: Role.VIEWER });
    const vic = await joinInNewBrowser(invitationToken, "Vic", "vic's long password");

    await vic.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    await vic.getByRole("link", { name: "Read-only intake" }).waitFor();
    await expect.poll(() => vic.getByRole("link", { name: "New pipe" }).count()).toBe(0);
    expect(await vic.getByRole("button", { name: "Create the invoices example" }).count()).toBe(0);
    await vic.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/${pipe!.id}`);
    await vic.getByText("Your role in this organization lets you read pipes, not change them.").waitFor();
    for (const name of ["Save changes", "Activate", "Delete"]) expect(await vic.getByRole("button", { name }).count()).toBe(0);
    // The form reads as the pipe is: no box takes typing (an edit could never be saved).
    const boxes = await vic.locator("form.editor").getByRole("textbox").all();
    expect(boxes.length).toBeGreaterThan(0);
    for (const box of boxes) expect(await box.isEditable()).toBe(false);
    await expectAccessible(vic);
    await screenshot(vic, "pipe-viewer");
    await vic.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/members`);
    await vic.getByRole("row", { name: /vic@example.com/ }).waitFor();
    await expect(vic.getByLabel("Role of vic@example.com").isDisabled()).resolves.toBe(true);
    expect(await vic.getByRole("button", { name: "Create invitation link" }).count()).toBe(0);
    expect(await vic.getByRole("button", { name: /^Remove/ }).count()).toBe(0);
    await vic.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/signing-secret`);
    await vic.getByRole("heading", { level: 1 }).waitFor();
    expect(await vic.getByRole("button", { name: "Rotate secret" }).count()).toBe(0);

    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/${pipe!.id}`);
    for (const name of ["Save changes", "Activate", "Delete"]) await page.getByRole("button", { name }).waitFor();
    expect(await page.getByLabel("Name", { exact: true }).isEditable()).toBe(true);
  });

  it("an admin is shown no control over an owner the service refuses them: the owner's role, Remove, an Owner invitation", async () => {
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: "adam@example.com", role: Role.ADMIN });
    const adam = await joinInNewBrowser(invitationToken, "Adam", "adam's long password");
    await adam.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/members`);
    await adam.getByRole("row", { name: /ada@example.com/ }).waitFor();
    // The service answers permission_denied (only an owner may give, take or remove the owner role).
    await expect(adam.getByLabel("Role of ada@example.com").isDisabled()).resolves.toBe(true);
    expect(await adam.getByRole("button", { name: "Remove ada@example.com" }).count()).toBe(0);
    expect(await adam.getByLabel("Role", { exact: true }).locator("option", { hasText: "Owner" }).count()).toBe(0);
  });

  it("a reviewer who joins through an invitation lands on a page the role may read, not on an error", async () => {
    // The invitation opens #/orgs/<id>/pipes (the start page opens keys): ListPipes needs pipes.read, which a
    // reviewer has not, so the first thing a new reviewer sees is "the reviewer role does not allow pipes.read".
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: "rita@example.com", role: Role.REVIEWER });
    const rita = await joinInNewBrowser(invitationToken, "Rita", "rita's long password");
    await rita.getByRole("heading", { level: 1 }).waitFor();
    // The page has answered: a table, an empty state, or an error.
    await rita.locator("main").locator("[role=alert], table, .empty").first().waitFor({ timeout: 20_000 });
    expect(await rita.getByRole("alert").allTextContents()).toEqual([]);
    // The review queue, and a menu of the pages the role may read.
    await rita.getByRole("heading", { level: 1, name: "Review" }).waitFor();
    const menu = await rita.getByRole("navigation", { name: "Console" }).getByRole("link").allTextContents();
    expect(menu).toEqual(["Runs", "Review"]);
    await expectAccessible(rita);
    await screenshot(rita, "reviewer");
  });

  it("the console is never framed and runs under a strict Content-Security-Policy; a forged call without the CSRF header is refused", async () => {
    const response = await fetch(`${server.internalUrl}/console/`);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    const cookie = (await page.context().cookies()).find((candidate) => candidate.name === "docpipe_session")!;
    const forged = await fetch(`${server.internalUrl}/docpipe.v1.KeyService/CreateKey`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `docpipe_session=${cookie.value}` },
      body: JSON.stringify({ organizationId, name: "forged" }),
    });
    expect(forged.status).toBe(401);
    const body = (await forged.json()) as { code: string; message: string };
    expect(body).toMatchObject({ code: "unauthenticated", message: expect.stringContaining("x-docpipe-console") });
    expect((await server.clients.keys.listKeys({ organizationId })).keys).toEqual([]);
  });
  it("a viewer's side menu lists Review: the review queue and a run in review are pages a viewer may read (runs.read), not only a reviewer", async () => {
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId, email: "vera@example.com", role: Role.VIEWER });
    const vera = await joinInNewBrowser(invitationToken, "Vera", "vera's long password");
    // The queue answers a viewer (ListRuns needs runs.read), and a run in review tells a viewer "lets you read runs, not decide reviews".
    await vera.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review`);
    await vera.getByRole("heading", { level: 1, name: "Review" }).waitFor();
    await vera.locator("main").locator("[role=alert], table, .empty").first().waitFor({ timeout: 20_000 });
    expect(await vera.getByRole("alert").allTextContents()).toEqual([]);
    // The menu filters it by runs.review, which a viewer has not: the page can no longer be reached from the menu.
    const menu = vera.getByRole("navigation", { name: "Console" });
    await menu.getByRole("link", { name: "Runs" }).waitFor();
    expect(await menu.getByRole("link", { name: "Review" }).count()).toBe(1);
  });

  it("a person who is an owner in one organization and a reviewer in another switches organizations onto a page the role may read, not an error", async () => {
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Acme Review Desk", plan: "basic" });
    const { invitationToken } = await server.clients.members.createInvitation({ organizationId: organization!.id, email: owner.email, role: Role.REVIEWER });
    // Ada, signed in (owner of Acme People), joins the second organization as a reviewer.
    await page.goto(`${server.internalUrl}/console/#/invitation/${invitationToken}`);
    await page.getByLabel("Your name").fill("Ada Lovelace");
    await page.getByLabel("Password").fill(owner.password);
    await page.getByRole("button", { name: "Join" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();

    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    await page.getByRole("heading", { level: 1, name: "Pipes" }).waitFor();
    await page.getByRole("combobox", { name: "Organization" }).selectOption({ label: "Acme Review Desk" });
    await expect.poll(() => page.url()).toContain(organization!.id);
    // The switcher keeps the page (Pipes), which the reviewer role may not read: ListPipes answers permission_denied.
    await page.locator("main").locator("[role=alert], table, .empty").first().waitFor({ timeout: 20_000 });
    expect(await page.getByRole("alert").allTextContents()).toEqual([]);
  });
});
