import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMetrics } from './metrics.js';
import { carriesMetricsToken } from './metrics-token.js';

/**
 * `/metrics` for `npx tenure worker`, which has no HTTP app: its delivery attempts by outcome
 * and its process metrics would otherwise be visible nowhere. The queue gauges are left to the
 * API nodes' /metrics (they read the same database). Plain node:http: one route, no envelope
 * beyond a 401/404 line, since nothing but a scraper is meant to call it.
 */
export async function startWorkerMetricsServer(o: { host: string; port: number; token: string | null }) {
  const metrics = createMetrics();
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this server has only GET /metrics\n');
      return;
    }
    if (o.token !== null && !carriesMetricsToken(req.headers.authorization, o.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('metrics need the bearer token set in TENURE_METRICS_TOKEN\n');
      return;
    }
    metrics.scrape().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n'),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port, o.host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
