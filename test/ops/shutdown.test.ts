import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveClient } from '../live/live-harness.js';
import { onPostgres } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { cliTenant, scratch, until } from './ops-support.js';

/**
 * Graceful shutdown of a real server process (`node dist/main.js`): on SIGTERM it stops
 * accepting connections, lets a request still uploading its body and a webhook attempt still
 * waiting for its receiver finish, closes live-update sockets, releases the embedded data
 * directory, and exits 0. (shutdown.nowhere-to-write.test.ts: the same with a dead stdout or
 * stderr, in a file of its own so that the two run side by side.)
 */

/** Opens a raw connection and sends a request's head and the first part of its body. */
async function startUpload(url: string, requestPath: string, key: string, body: string): Promise<{ socket: Socket; response: Promise<string>; finish(then?: string): void }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString()));
  const response = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST ${requestPath} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n` +
      body.slice(0, half),
  );
  return { socket, response, finish: (then = '') => socket.write(body.slice(half) + then) };
}

/** True once a TCP connection to `url` is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(port), hostname);
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

const exitOf = (server: ServerProcess) =>
  new Promise<number | null>((resolve) =>
    server.child.exitCode !== null ? resolve(server.child.exitCode) : server.child.once('exit', (code) => resolve(code)),
  );

describe('graceful shutdown on SIGTERM', () => {
  let dir: Awaited<ReturnType<typeof scratch>>;
  let receiver: Receiver;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    dir = await scratch('shutdown');
    // The first attempt is held open until the test releases it; any later one is answered at once.
    receiver = await startReceiver((_r, index) => (index === 0 ? 'stall' : { status: 200 }));
  });
  afterAll(async () => {
    if (server?.child.exitCode === null) await server.stop();
    await receiver.close();
    await dir.remove();
  });

  it('finishes the in-flight request and webhook attempt, refuses new connections, and exits 0', async () => {
    const { projectId, key } = await cliTenant(dir.env);
    const env = { ...dir.env, LOG_LEVEL: 'debug', TENURE_WEBHOOK_ALLOW_PRIVATE: 'true', TENURE_SHUTDOWN_TIMEOUT_MS: '60000' };
    server = await startServerProcess(env);
    const base = `${server.url}/v2/projects/${projectId}`;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    // A webhook whose receiver holds the attempt open, and an event for it.
    const hook = await fetch(`${base}/integrations/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: `${receiver.url}/held` }) });
    expect(hook.status, await hook.clone().text()).toBe(200);
    const webhookId = ((await hook.json()) as { data: { id: string } }).data.id;
    const member = await fetch(`${base}/memberships`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ user_id: '4242', end_date: new Date(Date.now() + 86_400_000).toISOString() }),
    });
    expect(member.status).toBe(201);
    await receiver.waitFor(1);

    // A live-update connection, counted by the node's metrics; shutdown closes it.
    const live = new LiveClient(server.url, { token: key, project_id: projectId }, ['websocket']);
    await live.until(() => live.socket.connected, 'the live connection');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^tenure_live_connections 1$/m);

    // A request whose body is still arriving.
    const body = JSON.stringify({ user_id: '4343', end_date: new Date(Date.now() + 86_400_000).toISOString(), pad: 'x'.repeat(2000) });
    // The member created above logged this URL already: wait for one more line, the upload's own
    // `incoming request` (logged at debug, as the request arrives).
    const logged = () => server!.output().split(`"url":"/v2/projects/${projectId}/memberships"`).length - 1;
    const before = logged();
    const upload = await startUpload(server.url, `/v2/projects/${projectId}/memberships`, key, body);
    await until(() => logged() > before, 'the server to log the upload');

    const running = server;
    running.child.kill('SIGTERM');
    await until(() => running.output().includes('shutting down'), 'the shutdown to begin');
    await until(() => refused(running.url), 'new connections to be refused');
    expect(running.child.exitCode, running.output()).toBeNull();

    // Both pieces of work in flight complete. A request pipelined behind the upload arrives
    // while the server closes: it is refused in the envelope, and the connection closed.
    upload.finish(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    receiver.releaseStalled(200);
    const response = await upload.response;
    expect(response, running.output()).toMatch(/^HTTP\/1\.1 201 /);
    expect(response).toContain('"user_id":"4343"');
    const refusedLate = response.slice(response.indexOf('HTTP/1.1 503 '));
    expect(refusedLate, response).toMatch(/^HTTP\/1\.1 503 [^]*connection: close/i);
    expect(refusedLate).toMatch(/"ok":false,"request_id":"[0-9a-f-]{36}","method":"GET","path":"\/healthz","code":503,"error":\{"error_code":"SERVICE_UNAVAILABLE"/);
    expect(await exitOf(running), running.output()).toBe(0);
    expect(running.output()).not.toMatch(/shutdown deadline reached/);
    expect(live.socket.connected).toBe(false);
    if (!onPostgres) expect(existsSync(path.join(dir.env.DATA_DIR!, 'tenure.lock'))).toBe(false);

    // Started again, the delivery shows as delivered in one attempt: it was not cut off.
    server = await startServerProcess(env);
    const deliveries = await fetch(`${server.url}/v2/projects/${projectId}/integrations/webhooks/${webhookId}/deliveries`, { headers: auth });
    const list = (await deliveries.json()) as { data: { status: string; attempts: { outcome: string }[] }[] };
    // Newest first: the held one is the oldest (the upload's membership made another).
    const held = list.data.at(-1)!;
    expect(held.status, JSON.stringify(list)).toBe('delivered');
    expect(held.attempts.map((a) => a.outcome)).toEqual(['delivered']);
    const second = server;
    second.child.kill('SIGINT');
    expect(await exitOf(second), second.output()).toBe(0);
  }, 120_000);
});
