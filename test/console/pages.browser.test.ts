/**
 * The rest of the console in real Chromium against a docpipe that requires INTERNAL_TOKEN: the
 * token prompt, the switchers, Workspaces, Signing secret and the phone-width layout.
 */
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { SigningSecretState } from "../../gen/docpipe/v1/signing_secret_pb.js";
import { CHROMIUM, type ConsoleServer, emptyDatabase, expectAccessible, launchChromium, operatorPage, pageFaults, startConsoleServer } from "./harness.ts";

const TOKEN = "console-test-token-0123456789";

describe.skipIf(!existsSync(CHROMIUM))("console pages with INTERNAL_TOKEN set", () => {
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let faults: string[];
  let organizationId: string;

  beforeAll(async () => {
    const [started, launched] = await Promise.all([startConsoleServer({ INTERNAL_TOKEN: TOKEN }), launchChromium()]);
    server = started;
    browser = launched;
    // Organizations are listed oldest first, 100 to a page: this one is beyond the switcher's first page.
    await Promise.all(Array.from({ length: 100 }, (_, index) => server.clients.workspaces.createOrganization({ name: `Earlier ${index}`, plan: "free" })));
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Console pages", plan: "basic" });
    organizationId = organization!.id;
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  it("/ leads to the console's sign-in page, where the operator gives the token once and it is kept for the session", async () => {
    await page.goto(`${server.internalUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/console/");
    await page.getByText("Sign in as the operator (INTERNAL_TOKEN)").click();
    const token = page.getByLabel("Internal token");
    await token.waitFor();
    await expectAccessible(page);

    await token.fill("wrong token");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("That token was not accepted.").waitFor();

    await page.getByLabel("Internal token").fill(TOKEN);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();

    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/keys`);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await expect(page.getByLabel("Internal token").count()).resolves.toBe(0);
  });

  it("an organization that does not exist: the service's message and reason", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/01a2016e-0000-7000-8000-000000000000/keys`);
    await page.getByRole("alert").filter({ hasText: "organization not found (organization_not_found)" }).waitFor();
    await expectAccessible(page);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
  });

  it("the organization switcher lists the organizations (and the open one beyond its first page); the workspace switcher the organization's workspaces", async () => {
    const organizations = page.getByRole("combobox", { name: "Organization" });
    await expect.poll(() => organizations.inputValue()).toBe(organizationId);
    await expect.poll(() => organizations.locator("option", { hasText: "Console pages" }).count()).toBeGreaterThan(0);
    const { workspace } = await server.clients.workspaces.createWorkspace({ organizationId, name: "Receipts" });
    await page.reload();
    const workspaces = page.getByRole("combobox", { name: "Workspace" });
    await expect.poll(() => workspaces.locator("option").allTextContents()).toEqual(["All workspaces", "Default", "Receipts"]);
    await workspaces.selectOption(workspace!.id);
    await page.getByRole("link", { name: "Pipes" }).click();
    await page.getByText("No pipes here yet").waitFor();
  });

  it("another organization starts its workspace switcher from All workspaces, and so does this one on coming back", async () => {
    const workspaces = page.getByRole("combobox", { name: "Workspace" });
    await workspaces.selectOption({ label: "Receipts" });
    await page.getByRole("combobox", { name: "Organization" }).selectOption({ label: "Earlier 0" });
    await expect.poll(() => workspaces.locator("option").allTextContents()).toEqual(["All workspaces", "Default"]);
    expect(await workspaces.inputValue()).toBe("");
    // Back by address, in the same page: the console keeps its state, and the pick made here before is not restored.
    await page.evaluate(`location.hash = "#/orgs/${organizationId}/pipes"`);
    await expect.poll(() => workspaces.locator("option").allTextContents()).toEqual(["All workspaces", "Default", "Receipts"]);
    expect(await workspaces.inputValue()).toBe("");
  });

  it("Workspaces: create, rename and delete (never the default)", async () => {
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("New workspace name").fill("Invoices");
    await page.getByRole("button", { name: "Create workspace" }).click();
    const row = page.getByRole("row", { name: /Invoices/ });
    await row.waitFor();
    await expectAccessible(page);

    await row.getByRole("button", { name: "Rename Invoices" }).click();
    const rename = page.getByRole("dialog", { name: "Rename “Invoices”" });
    await rename.getByLabel("Name").fill("Invoices EU");
    await rename.getByRole("button", { name: "Rename" }).click();
    const renamed = page.getByRole("row", { name: /Invoices EU/ });
    await renamed.waitFor();

    await renamed.getByRole("button", { name: "Delete Invoices EU" }).click();
    await page.getByRole("dialog", { name: "Delete “Invoices EU”?" }).getByRole("button", { name: "Delete workspace" }).click();
    await renamed.waitFor({ state: "detached" });
    const defaultRow = page.getByRole("row", { name: /Default/ });
    await expect(defaultRow.getByRole("button", { name: /Delete/ }).count()).resolves.toBe(0);
  });

  it("Signing secret: rotate shows the new secret once; completing the rotation retires the previous one", async () => {
    await page.getByRole("link", { name: "Signing secret" }).click();
    await page.getByRole("heading", { level: 1, name: "Signing secret" }).waitFor();
    await expectAccessible(page);
    for (const round of [1, 2]) {
      await page.getByRole("button", { name: "Rotate secret" }).click();
      await page.getByRole("dialog", { name: "Rotate the signing secret?" }).getByRole("button", { name: "Rotate" }).click();
      const shown = page.getByRole("dialog", { name: "Your new signing secret" });
      await shown.getByText("you will not see it again").waitFor();
      const secret = await shown.getByLabel("Signing secret").inputValue();
      expect(secret.length, `round ${round}`).toBeGreaterThan(20);
      if (round === 2) await expectAccessible(page);
      await shown.getByRole("button", { name: "Done" }).click();
      await shown.waitFor({ state: "detached" });
      expect(await page.content()).not.toContain(secret);
    }
    await page.getByRole("cell", { name: "Previous" }).waitFor();
    await page.getByRole("button", { name: /Complete rotation/ }).click();
    await page.getByRole("button", { name: /Complete rotation/ }).waitFor({ state: "detached" });
    const { secrets } = await server.clients.signingSecrets.listSigningSecrets({ organizationId });
    expect(secrets.map((secret) => secret.state)).toEqual([SigningSecretState.CURRENT]);
  });

  it("at phone width nothing runs off the side (wide tables scroll in their box) and the pages stay accessible", async () => {
    await server.clients.keys.createKey({ organizationId, name: "Nightly invoice import from the accounting system" });
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["keys", "pipes", "runs", "workspaces", "signing-secret"]) {
      await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      if (path === "keys") await page.getByRole("row", { name: /Nightly invoice import/ }).waitFor();
      await expect.poll(() => page.evaluate<number>("document.documentElement.scrollWidth"), { message: path }).toBeLessThanOrEqual(390);
      await expectAccessible(page);
    }
  });

  it("a docpipe without organizations offers to create the first; a plan it does not know is marked beside Plan", async () => {
    const empty = await emptyDatabase();
    onTestFinished(empty.drop);
    const fresh = await startConsoleServer({ DATABASE_URL: empty.url });
    onTestFinished(fresh.close);
    const first = await operatorPage(browser, fresh, { width: 1280, height: 800 });
    const firstFaults = pageFaults(first);
    await first.goto(`${fresh.internalUrl}/console/`);
    await first.getByText("There is no organization yet").waitFor();
    await expectAccessible(first);
    await first.getByLabel("Organization name").fill("Acme");
    const plan = first.getByLabel("Plan");
    await plan.fill("gold");
    await first.getByRole("button", { name: "Create organization" }).click();
    await expect.poll(() => plan.getAttribute("aria-invalid")).toBe("true");
    await first.getByText("plan must be one of free, basic, standard, advanced").waitFor();
    await plan.fill("standard");
    await first.getByRole("button", { name: "Create organization" }).click();
    await first.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    const { organizations } = await fresh.clients.workspaces.listOrganizations({});
    expect(organizations.map((organization) => [organization.name, organization.plan])).toEqual([["Acme", "standard"]]);
    expect(first.url()).toContain(`#/orgs/${organizations[0]!.id}/keys`);
    expect(firstFaults).toEqual([]);
  });
});
