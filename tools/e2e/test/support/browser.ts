/**
 * Real headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by
 * playwright-core (no browser download). Every page records the console and page errors so a test
 * can assert that nothing broke, Content-Security-Policy violations included.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { ROOT } from './stack';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

export interface PageLog {
  /** Console messages of type error or warning, and uncaught page errors. */
  problems: string[];
  /** Dialogs (alert/confirm/prompt) the page opened; each is dismissed at once. */
  dialogs: string[];
}

/** A fresh context (own sessionStorage, cookies, cache) and one page in it, with its log. */
export async function openPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; log: PageLog }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const log: PageLog = { problems: [], dialogs: [] };
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') log.problems.push(`${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => log.problems.push(`pageerror: ${err.message}`));
  page.on('dialog', (dialog) => {
    log.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, log };
}

export const isCspViolation = (line: string) => /Content Security Policy/i.test(line);

/**
 * Screenshots for docs/screenshots, written only when UPDATE_SCREENSHOTS=1 so ordinary runs (CI)
 * never rewrite tracked files.
 */
export async function saveScreenshot(page: Page, name: string, fullPage = true): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  const dir = path.join(ROOT, 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name), fullPage, animations: 'disabled' });
}
