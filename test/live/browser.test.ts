import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMembership } from '../support/api.js';
import { closeChromium, launchChromium, needBrowser, type LaunchedChromium } from '../support/browser.js';
import { future } from '../support/harness.js';
import { createLiveHarness, type LiveHarness } from './live-harness.js';

/**
 * docs/live-updates.md "From a browser", in a real headless Chromium (the machine's or the one
 * packaged in @sparticuz/chromium, driven by playwright-core: test/support/browser.ts): a page served from another origin than the API gets
 * a token minted server-side, connects with the browser build of socket.io-client over WebSocket
 * and over long-polling (a cross-origin request: CORS must allow it), and receives an extend made
 * over REST.
 */

/** What the page records, per transport (read in the page through `globalThis`: no DOM types here). */
type Received = { received: { websocket: string[]; polling: string[] } };

const CLIENT_BUNDLE = fileURLToPath(new URL('../../node_modules/socket.io-client/dist/socket.io.min.js', import.meta.url));
const PAGE = `<!doctype html><meta charset="utf-8"><script src="/socket.io.min.js"></script><script>
  const params = new URLSearchParams(location.search);
  window.received = { websocket: [], polling: [] };
  for (const transport of ['websocket', 'polling']) {
    const socket = io(params.get('api') + '/v2/live-updates', {
      path: '/v2/live-updates/socket.io/',
      transports: transport === 'websocket' ? ['websocket', 'polling'] : ['polling'],
      auth: (send) => send({ token: params.get('token'), project_id: params.get('project') }),
    });
    socket.on('message', (m) => {
      window.received[transport].push(m.type);
      if (m.type === 'ready') socket.emit('message', { action: 'subscribe', channel: 'memberships' });
    });
    socket.on('membership.extended', (e) => window.received[transport].push(e.type + ' ' + e.data.membership.membership_end_date));
  }
</script>`;

let lh: LiveHarness;
let site: Server;
let siteUrl: string;
let browser: LaunchedChromium | undefined;
beforeAll(async () => {
  lh = await createLiveHarness();
  const bundle = await readFile(CLIENT_BUNDLE);
  site = createServer((req, res) => {
    if (req.url === '/socket.io.min.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  // "localhost" against the API's "127.0.0.1": another origin.
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}`;
  browser = await launchChromium(['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']);
});
afterAll(async () => {
  await closeChromium(browser);
  await new Promise((resolve) => site?.close(resolve));
  await lh?.close();
});

it('connects from a page of another origin with a minted token, over WebSocket and long-polling, and gets an extend', async (ctx) => {
  const chromium = needBrowser(browser, ctx);
  const t = await lh.tenant();
  const m = await createMembership(t);
  const minted = await t.request({ method: 'POST', url: `${t.base}/integrations/live-updates/tokens` });
  expect(minted.statusCode, minted.body).toBe(200);
  const query = new URLSearchParams({ api: lh.url, token: minted.json().data.token, project: t.projectId });
  const page = await chromium.newPage();
  try {
    await page.goto(`${siteUrl}/?${query.toString()}`);
    await page.waitForFunction(() => {
      const r = (globalThis as unknown as Received).received;
      return r.websocket.includes('subscribed') && r.polling.includes('subscribed');
    });
    const res = await t.request({ method: 'PATCH', url: `${t.base}/memberships/${m.user_id}/extend`, payload: { extend: future(60).iso } });
    expect(res.statusCode, res.body).toBe(200);
    const expected = `membership.extended ${res.json().data.new_end_date as string}`;
    await page.waitForFunction((e) => {
      const r = (globalThis as unknown as Received).received;
      return r.websocket.includes(e) && r.polling.includes(e);
    }, expected);
    const received = await page.evaluate(() => (globalThis as unknown as Received).received);
    expect(received).toStrictEqual({ websocket: ['ready', 'subscribed', expected], polling: ['ready', 'subscribed', expected] });
  } finally {
    await page.close();
  }
});
