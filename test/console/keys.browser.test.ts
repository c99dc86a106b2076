/**
 * Settings -> API keys in real Chromium against a running docpipe: a key made in the console works
 * at the edge, and Deactivate / Reactivate / Delete take effect there at once.
 */
import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLES } from "../formats/fixtures.ts";
import { createActivePipe } from "../support/edge.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, pageFaults, screenshot, operatorPage, startConsoleServer, submit } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("Settings -> API keys", () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let pipeId: string;

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Acme Documents", plan: "advanced" });
    organizationId = organization!.id;
    pipeId = await createActivePipe(server.clients, organizationId, { acceptedFormats: ["pdf"], maxSizeMb: 1 });
    page = await operatorPage(browser, server, { width: 1280, height: 800 });
    faults = pageFaults(page);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/keys`);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  it("an organization without keys says what to do next", async () => {
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByText("No API keys yet").waitFor();
    await expectAccessible(page);
  });

  it("by keyboard: Enter on New API Key opens the dialog with focus on Name; Escape closes it", async () => {
    await page.getByRole("button", { name: "New API Key" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "New API Key" });
    await dialog.waitFor();
    await expect.poll(() => page.evaluate<string | undefined>("document.activeElement?.labels?.[0]?.textContent")).toBe("Name");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
  });

  it("New API Key shows a server error beside the field it concerns", async () => {
    await page.getByRole("button", { name: "New API Key" }).click();
    const dialog = page.getByRole("dialog", { name: "New API Key" });
    await dialog.getByLabel("Name").fill("Yesterday's key");
    await dialog.getByLabel("Expiration date").fill("2020-01-01");
    await dialog.getByRole("button", { name: "Create key" }).click();
    const field = dialog.getByLabel("Expiration date");
    await expect.poll(() => field.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await field.getAttribute("aria-describedby"))!.split(" ");
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(messages).toContain("expire_time must be in the future");
    await expectAccessible(page);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
  });

  it("a double click on Create key makes one key, whose value is shown", async () => {
    await page.getByRole("button", { name: "New API Key" }).click();
    const form = page.getByRole("dialog", { name: "New API Key" });
    await form.getByLabel("Name").fill("Clicked twice");
    await form.getByRole("button", { name: "Create key" }).dblclick();
    const shown = page.getByRole("dialog", { name: "Your new API key" });
    await shown.getByText("you will not see it again").waitFor();
    const { keys } = await server.clients.keys.listKeys({ organizationId });
    expect(keys.filter((key) => key.name === "Clicked twice")).toHaveLength(1);
    const keyId = keys.find((key) => key.name === "Clicked twice")!.id;
    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });
    await server.clients.keys.deleteKey({ organizationId, keyId });
    await page.reload();
  });

  it("New API Key 'CI uploader': the value is shown once and works at the edge (202)", async () => {
    await page.getByRole("button", { name: "New API Key" }).click();
    const form = page.getByRole("dialog", { name: "New API Key" });
    await form.getByLabel("Name").fill("CI uploader");
    await form.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("dialog", { name: "Your new API key" });
    await shown.getByText("you will not see it again").waitFor();
    const keyValue = await shown.getByLabel("Key for “CI uploader”").inputValue();
    expect(keyValue).toMatch(/^dp_/);
    await shown.getByRole("button", { name: "Copy key" }).waitFor();
    await expectAccessible(page);
    await screenshot(page, "new-api-key");

    expect((await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.pdf)).status).toBe(202);

    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(keyValue);
    const row = page.getByRole("row", { name: /CI uploader/ });
    // exact: the actions cell reads "DeactivateDelete", which contains "Deactivated".
    await row.getByText(keyValue.slice(-4)).waitFor();
    await row.getByText("Active", { exact: true }).waitFor();
    await expectAccessible(page);
    await screenshot(page, "keys");

    // Deactivate (confirmed): the edge refuses the key.
    await row.getByRole("button", { name: "Deactivate CI uploader" }).click();
    const confirmDeactivate = page.getByRole("dialog", { name: "Deactivate “CI uploader”?" });
    await confirmDeactivate.getByRole("button", { name: "Deactivate" }).click();
    await row.getByText("Deactivated", { exact: true }).waitFor();
    const deactivated = await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.pdf);
    expect([deactivated.status, ((await deactivated.json()) as { code: string }).code]).toEqual([401, "api_key_deactivated"]);

    // Reactivate: accepted again.
    await row.getByRole("button", { name: "Reactivate CI uploader" }).click();
    await row.getByText("Active", { exact: true }).waitFor();
    expect((await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.pdf)).status).toBe(202);

    // Delete: the confirmation names the key and says it cannot be undone; then the key is gone.
    await row.getByRole("button", { name: "Delete CI uploader" }).click();
    const confirmDelete = page.getByRole("dialog", { name: "Delete “CI uploader”?" });
    await expect(confirmDelete.textContent()).resolves.toContain("cannot be undone");
    await expectAccessible(page);
    await confirmDelete.getByRole("button", { name: "Delete key" }).click();
    await row.waitFor({ state: "detached" });
    await page.getByText("No API keys yet").waitFor();
    const refused = await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.pdf);
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([401, "api_key_invalid"]);
  });

  it("an organization with 101 keys shows 100, and Load more the 101st: no list is silently cut", async () => {
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Many Keys", plan: "advanced" });
    const many = organization!.id;
    for (let index = 0; index < 101; index++) await server.clients.keys.createKey({ organizationId: many, name: `key ${String(index).padStart(3, "0")}` });
    await page.goto(`${server.internalUrl}/console/#/orgs/${many}/keys`);
    const rows = page.getByRole("region", { name: "API keys" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(100);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows.count()).toBe(101);
    await page.getByRole("button", { name: "Load more" }).waitFor({ state: "detached" });
  });

  it("an organization with 51 runs shows the newest 50, and Load more the first: the runs list is paged too", async () => {
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Many Runs", plan: "advanced" });
    const many = organization!.id;
    const manyPipe = await createActivePipe(server.clients, many, { acceptedFormats: ["pdf"], maxSizeMb: 1 });
    const { keyValue } = await server.clients.keys.createKey({ organizationId: many, name: "submitter" });
    for (let index = 0; index < 51; index++) expect((await submit(server.edgeUrl, manyPipe, keyValue, SAMPLES.pdf)).status).toBe(202);
    await page.goto(`${server.internalUrl}/console/#/orgs/${many}/runs`);
    const rows = page.getByRole("region", { name: "Runs" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(50);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows.count()).toBe(51);
    await page.getByRole("button", { name: "Load more" }).waitFor({ state: "detached" });
  });
});
