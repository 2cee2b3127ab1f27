import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * The browser tests drive a Chromium already on the machine through playwright-core, which
 * downloads no browser. Where none is found they are reported as skipped, with the reason and
 * the fix in the skip note, never passed; with TENURE_REQUIRE_BROWSER=1 (set by .ci/run, which
 * installs Debian's Chromium) a missing browser fails them instead.
 */

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** TENURE_CHROMIUM names a binary outright; otherwise the usual Debian and Ubuntu paths. */
export function chromiumPath(): string | null {
  const named = process.env.TENURE_CHROMIUM;
  if (named) return named;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export const MISSING_BROWSER =
  `no Chromium found (looked at ${CANDIDATES.join(', ')}): install Debian's with ` +
  '`apt-get install chromium`, or set TENURE_CHROMIUM to a Chromium binary';

/**
 * Launches the browser for a file's `beforeAll`; null when there is none and none is required.
 * Tests that need it call `needBrowser(browser, ctx)`.
 */
export async function launchChromium(args: string[]): Promise<Browser | null> {
  const executablePath = chromiumPath();
  if (executablePath === null) {
    if (process.env.TENURE_REQUIRE_BROWSER === '1') throw new Error(`TENURE_REQUIRE_BROWSER=1, but ${MISSING_BROWSER}`);
    return null;
  }
  return chromium.launch({ executablePath, args });
}

/** The launched browser, or the test is skipped with a note naming what is missing. */
export function needBrowser(browser: Browser | null, ctx: { skip(note?: string): never }): Browser {
  return browser ?? ctx.skip(MISSING_BROWSER);
}
