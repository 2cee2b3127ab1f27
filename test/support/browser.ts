import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import lockfile from 'proper-lockfile';

/**
 * The browser tests drive a real headless Chromium through playwright-core, which downloads no
 * browser. Tried in order, the first that launches wins:
 * 1. TENURE_CHROMIUM, a binary named outright: then nothing else is tried, so a broken one is
 *    reported rather than quietly replaced;
 * 2. a Chromium installed on the machine (the usual Debian and Ubuntu paths);
 * 3. the Chromium shipped inside the @sparticuz/chromium devDependency (brotli-compressed in the npm
 *    package), so a machine with only Node and npm needs no apt. On Debian it needs only libnss3,
 *    libnspr4 and libexpat.
 * When none launches the tests are reported as skipped, with what was tried and the fix in the skip
 * note, never passed; with TENURE_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead.
 */

const SYSTEM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** A headless launch takes well under a second here; a hung one must leave room for the next try. */
const LAUNCH_TIMEOUT_MS = 30_000;

const FIX =
  'install libnss3, libnspr4 and libexpat (Debian: `apt-get install libnss3 libexpat1`) for the packaged ' +
  'Chromium, install a Chromium (Debian: `apt-get install chromium`), or set TENURE_CHROMIUM to a Chromium binary';

export type LaunchedChromium = { browser: Browser; from: string } | { browser: null; missing: string };

/** One way to get a Chromium binary: its name in notes, and its path (unpacking it if need be). */
type Candidate = { name: string; path: () => Promise<string> };

function candidates(): Candidate[] {
  const named = process.env.TENURE_CHROMIUM;
  if (named) return [{ name: `TENURE_CHROMIUM=${named}`, path: () => Promise.resolve(named) }];
  const installed = SYSTEM_PATHS.filter((p) => existsSync(p)).map((p) => ({ name: p, path: () => Promise.resolve(p) }));
  return [...installed, { name: 'the Chromium of @sparticuz/chromium', path: packagedChromium }];
}

/**
 * Launches the browser for a file's `beforeAll`. Without one, and none required, the result says
 * what is missing; tests that need the browser call `needBrowser(launched, ctx)`.
 */
export async function launchChromium(args: string[]): Promise<LaunchedChromium> {
  const tried = candidates();
  const failures: string[] = [];
  if (!process.env.TENURE_CHROMIUM && tried.length === 1) failures.push(`none installed at ${SYSTEM_PATHS.join(', ')}`);
  for (const candidate of tried) {
    try {
      const executablePath = await candidate.path();
      const browser = await chromium.launch({ executablePath, args, timeout: LAUNCH_TIMEOUT_MS });
      return { browser, from: candidate.name };
    } catch (error) {
      failures.push(`${candidate.name}: ${reason(error)}`);
    }
  }
  const missing = `no Chromium could be launched (${failures.join('; ')}): ${FIX}`;
  if (process.env.TENURE_REQUIRE_BROWSER === '1') throw new Error(`TENURE_REQUIRE_BROWSER=1, but ${missing}`);
  return { browser: null, missing };
}

/** The launched browser, or the test is skipped with a note naming what is missing. */
export function needBrowser(launched: LaunchedChromium | undefined, ctx: { skip(note?: string): never }): Browser {
  if (launched === undefined) throw new Error('launchChromium() did not run in beforeAll');
  return launched.browser ?? ctx.skip(launched.missing);
}

/** Closes the browser if one was launched (for `afterAll`, which also runs after a failed `beforeAll`). */
export async function closeChromium(launched: LaunchedChromium | undefined): Promise<void> {
  await launched?.browser?.close();
}

/**
 * Playwright's launch errors run to dozens of lines of browser log; the note keeps the first line
 * and the browser's own complaint on stderr (a missing shared library, most often).
 */
function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex -- the call log is coloured with ANSI escapes
  const lines = text.replace(/\u001b\[[0-9;]*m/g, '').split('\n').map((l) => l.trim()).filter(Boolean);
  const first = (lines[0] ?? 'unknown error').replace(/^browserType\.launch: /, '');
  const stderr = lines.find((l) => /^\[pid=\d+\]\[err\]/.test(l))?.replace(/^\[pid=\d+\]\[err\]\s*/, '');
  return (stderr ? `${first}: ${stderr}` : first).slice(0, 300);
}

const CACHE_ROOT = fileURLToPath(new URL('../../node_modules/.cache/tenure-chromium/', import.meta.url));

/**
 * The packaged binary, unpacked once per version into node_modules/.cache (not the package's own
 * executablePath(), which unpacks to a shared /tmp/chromium and returns it as soon as the file
 * exists, so a second vitest worker, or a run interrupted mid-unpack, would launch a partial file).
 * Test files run in parallel workers: a cross-process lock lets one unpack while the others wait,
 * and the binary appears under its final name only once complete (written aside, then renamed).
 */
async function packagedChromium(): Promise<string> {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  } catch {
    throw new Error('@sparticuz/chromium is not installed (run `npm install`)');
  }
  // The entry is <package>/build/<format>/index.*; the compressed browser is in <package>/bin.
  const root = join(dirname(entry), '..', '..');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const dir = join(CACHE_ROOT, version);
  const executable = join(dir, 'chromium');
  if (existsSync(executable)) return executable;

  await mkdir(dir, { recursive: true });
  // Unpacking takes a few seconds (longer on busy shared cores): waiters retry for up to ~2 minutes;
  // the holder refreshes the lock, and one left by a killed process goes stale after 20 s.
  const release = await lockfile.lock(dir, { stale: 20_000, retries: { retries: 240, minTimeout: 250, maxTimeout: 500 } });
  try {
    if (!existsSync(executable)) {
      const partial = `${executable}.partial`;
      try {
        await pipeline(
          createReadStream(join(root, 'bin', 'chromium.br')),
          createBrotliDecompress(),
          createWriteStream(partial, { mode: 0o755 }),
        );
        await rename(partial, executable);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    }
  } finally {
    await release();
  }
  return executable;
}
