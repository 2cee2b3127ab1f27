import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, productNode } from '../support/processes.js';
import { BIN, scratch, until } from '../ops/ops-support.js';

/**
 * `npx tenure worker` with TENURE_WORKER_METRICS_PORT: the worker node's own /metrics (its
 * delivery attempts and process metrics), behind the metrics token, then a clean stop.
 */

let dir: Awaited<ReturnType<typeof scratch>>;
beforeAll(async () => {
  dir = await scratch('worker-metrics');
});
afterAll(() => dir.remove());

describe('tenure worker metrics', () => {
  it('serves /metrics on its own port, wants the token when one is set, and stops on SIGTERM', async () => {
    const port = await freePort();
    const token = 'worker-metrics-token-0123456789';
    const child = spawn(process.execPath, productNode([BIN, 'worker']), {
      env: { ...dir.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', TENURE_WORKER_METRICS_PORT: String(port), TENURE_METRICS_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until(() => out.includes('webhook worker running'), `the worker to start:\n${out}`, 60_000);
      const url = `http://127.0.0.1:${port}/metrics`;
      expect(out).toContain(`worker metrics at ${url}`);

      const denied = await fetch(url);
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toBe('Bearer');
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(text).toContain('# TYPE tenure_webhook_delivery_attempts_total counter');
      expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
      expect((await fetch(`http://127.0.0.1:${port}/elsewhere`)).status).toBe(404);

      child.kill('SIGTERM');
      expect(await exited, out).toBe(0);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
