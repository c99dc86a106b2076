import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium; browser tests are skipped where it is not installed. */
export const CHROMIUM = "/usr/bin/chromium";

/** Headless, a fresh profile, nothing reaching the internet (no updates, sync or background requests); QUIC off so loopback is plain HTTP. */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** One Chromium for the file's tests; the caller closes it after them. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
