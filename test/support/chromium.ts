/**
 * Launches Debian's real Chromium (`apt-get install chromium`; `.ci/run` installs it when it can)
 * headless through playwright-core, for the console and `/docs` tests:
 *
 * ```ts
 * import { chromiumSkip, launchChromium } from "../support/chromium.js";
 * test("renders", { skip: chromiumSkip }, async () => {
 *   const browser = await launchChromium();
 *   try { const page = await browser.newPage(); await page.goto(url); } finally { await browser.close(); }
 * });
 * ```
 *
 * Every launch gets a fresh user-data dir (removed on close) and the flags the issue names:
 * `--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update`.
 */
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM_PATH = process.env.WHARF_CHROMIUM ?? "/usr/bin/chromium";

function chromiumInstalled(): boolean {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** node:test `skip` value: false when Chromium is installed, else why the test is skipped. */
export const chromiumSkip: false | string = chromiumInstalled()
  ? false
  : `chromium not installed at ${CHROMIUM_PATH}: apt-get install chromium`;

/** The flags every test browser runs with. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
] as const;

/** Options of {@link launchChromium}. */
export interface LaunchOptions {
  /** Viewport; default 1280×800. */
  viewport?: { width: number; height: number };
  /** Grants clipboard read/write, for "copy" buttons; default false. */
  clipboard?: boolean;
}

/**
 * A headless Chromium with a fresh profile, as one persistent context (pages come from
 * `context.newPage()`). `close()` closes the browser and removes the profile directory.
 */
export async function launchChromium(options: LaunchOptions = {}): Promise<BrowserContext> {
  const userDataDir = mkdtempSync(join(tmpdir(), "wharf-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: options.viewport ?? { width: 1280, height: 800 },
    timeout: 60_000,
    ...(options.clipboard ? { permissions: ["clipboard-read", "clipboard-write"] } : {}),
  });
  const close = context.close.bind(context);
  context.close = async (...args: Parameters<BrowserContext["close"]>) => {
    try {
      await close(...args);
    } finally {
      rmSync(userDataDir, { recursive: true, force: true });
    }
  };
  return context;
}
