import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutdownBudget } from '../../src/shutdown.js';
import { LiveClient } from '../live/live-harness.js';
import { onPostgres } from '../support/harness.js';
import { freePort, startServerProcess, type ServerProcess } from '../support/processes.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { BIN, cliTenant, scratch, until } from './ops-support.js';

/**
 * Graceful shutdown of a real server process (`node dist/main.js`): on SIGTERM it stops
 * accepting connections, lets a request still uploading its body and a webhook attempt still
 * waiting for its receiver finish, closes live-update sockets, releases the embedded data
 * directory, and exits 0.
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
    const env = { ...dir.env, LOG_LEVEL: 'info', TENURE_WEBHOOK_ALLOW_PRIVATE: 'true', TENURE_SHUTDOWN_TIMEOUT_MS: '60000' };
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
    // The member created above logged this URL already: wait for one more line, the upload's own.
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

/**
 * A process whose output has nowhere to go still ends on SIGTERM, within the shutdown timeout: a stdout or stderr pipe whose reader went away (a
 * log shipper restarted, a parent killed), and a log write that fails.
 */
describe('shutdown with nowhere to write', () => {
  const TIMEOUT_MS = 2_000;
  const LIMIT_MS = TIMEOUT_MS;
  const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
  const LOGGER = fileURLToPath(new URL('../../dist/logger.js', import.meta.url));
  let dir: Awaited<ReturnType<typeof scratch>>;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await scratch('dead-pipes');
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await dir.remove();
  });

  type Stdio = 'pipe' | number;
  function start(args: string[], env: Record<string, string>, stdout: Stdio = 'pipe') {
    const child = spawn(process.execPath, args, {
      env: { ...dir.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TENURE_DEMO_PROJECT: 'false', TENURE_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS), ...env },
      stdio: ['ignore', stdout, 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    // Reading a destroyed pipe's end is over; what matters is only when, and how, the process ends.
    child.stdout?.on('error', () => {});
    child.stderr!.on('error', () => {});
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, output: () => out, exit };
  }

  /** SIGTERM, then the exit; a process still running at the limit is killed and the test fails. */
  async function terminate(p: ReturnType<typeof start>, limitMs = LIMIT_MS) {
    const started = Date.now();
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), limitMs + 2_000);
    const result = await p.exit;
    clearTimeout(timer);
    return { ...result, ms: Date.now() - started };
  }

  const lockReleased = () => onPostgres || !existsSync(path.join(dir.env.DATA_DIR!, 'tenure.lock'));

  it('exits although its last log lines meet a closed stdout pipe at exit', async () => {
    // The lines logged just before process.exit() are still buffered: the exit writes them
    // synchronously, and the pipe's reader is gone before anything found out.
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
      const logger = createLogger('info');
      logger.info('started');
      setTimeout(() => { logger.info('exiting'); process.exit(0); }, 20);`;
    const p = start(['--input-type=module', '-e', script], {});
    p.child.stdout!.destroy();
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    expect(await p.exit, p.output()).toEqual({ code: 0, signal: null });
    clearTimeout(timer);
  });

  for (const which of ['stdout', 'stderr'] as const) {
    it(`server: exits 0 within the timeout after its ${which} pipe closed`, async () => {
      const p = start([MAIN], {});
      await until(() => p.output().includes('Server listening at'), 'the server to listen', 45_000);
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(p.output())![1]!;
      p.child[which]!.destroy();
      // Requests after the pipe closed are logged into it (and the server keeps serving).
      for (let i = 0; i < 3; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ended = await terminate(p);
      expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
      expect(ended.ms).toBeLessThan(LIMIT_MS);
      expect(lockReleased()).toBe(true);
    }, 60_000);
  }

  it('server: keeps serving when every log write fails, and exits 0 within the timeout', async () => {
    // /dev/full refuses every write (ENOSPC): the log lines are lost, the service is not.
    const full = openSync('/dev/full', 'w');
    const port = await freePort();
    const p = start([MAIN], { PORT: String(port) }, full);
    closeSync(full);
    const url = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 'the server to answer', 30_000);
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(p.child.exitCode, p.output()).toBeNull();
    const ended = await terminate(p);
    expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
    expect(ended.ms).toBeLessThan(LIMIT_MS);
    expect(lockReleased()).toBe(true);
  }, 60_000);

  it('worker: exits 0 within the timeout after its stdout pipe closed', async () => {
    const p = start([BIN, 'worker'], {});
    await until(() => p.output().includes('webhook worker running'), 'the worker to run', 45_000);
    p.child.stdout!.destroy();
    const ended = await terminate(p);
    expect(ended, p.output()).toMatchObject({ code: 0, signal: null });
    expect(ended.ms).toBeLessThan(LIMIT_MS);
    expect(lockReleased()).toBe(true);
  }, 60_000);

  it('a stop that never finishes ends at the deadline, with exit code 1', async () => {
    const shutdown = fileURLToPath(new URL('../../dist/shutdown.js', import.meta.url));
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
      import { shutdownRequested } from ${JSON.stringify(shutdown)};
      const logger = createLogger('info');
      setInterval(() => {}, 1000);
      void shutdownRequested({ logger, timeoutMs: 100 }).then(() => new Promise(() => {}));
      process.stderr.write('ready\\n');`;
    const p = start(['--input-type=module', '-e', script], {});
    await until(() => p.output().includes('ready'), 'the script to start');
    const ended = await terminate(p, shutdownBudget(100).exitMs);
    expect(ended, p.output()).toMatchObject({ code: 1, signal: null });
    expect(p.output()).toContain('shutdown did not finish in time');
  }, 30_000);
});
