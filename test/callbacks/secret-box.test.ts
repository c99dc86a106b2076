import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { lazySecretBox } from "../../src/runs/deliveries/secret-box.ts";

describe("lazySecretBox", () => {
  it("tries the key again after a failed load instead of failing for ever", async () => {
    const key = randomBytes(32);
    let attempts = 0;
    const box = lazySecretBox({ signingSecretsKey: undefined, dataDir: "/unused" }, async () => {
      attempts++;
      if (attempts === 1) throw new Error("EACCES: the data folder is not readable right now");
      return key;
    });
    await expect(box()).rejects.toThrow(/EACCES/);
    const opened = await box();
    expect(opened.open(opened.seal("whsec", "org"), "org")).toBe("whsec");
    expect(await box()).toBe(opened);
    expect(attempts).toBe(2);
  });

  it("is one box for one configuration, whoever asks (services, worker, delivery queue), and another for another", async () => {
    const config = { signingSecretsKey: randomBytes(32), dataDir: "/unused" };
    expect(lazySecretBox(config)).toBe(lazySecretBox(config));
    expect(await lazySecretBox(config)()).toBe(await lazySecretBox(config)());
    expect(lazySecretBox({ ...config })).not.toBe(lazySecretBox(config));
  });
});
