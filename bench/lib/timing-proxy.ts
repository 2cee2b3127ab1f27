import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy on 127.0.0.1 (port 0) that times every request it forwards: from the
 * request's last byte arriving to the answer's last byte handed back, i.e. what the upstream (a
 * fake Stripe) cost the caller, loopback hop included. bench/front-desk.ts puts it between tenure
 * and the fake Stripe to subtract Stripe's own time from each `GET /pay/{id}`.
 */

export interface TimedCall {
  method: string;
  path: string;
  /** The request body (form-encoded for Stripe), for matching a call to what caused it. */
  body: string;
  status: number;
  ms: number;
}

export interface TimingProxy {
  url: string;
  calls: TimedCall[];
  close(): Promise<void>;
}

export async function startTimingProxy(upstream: string): Promise<TimingProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const calls: TimedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const started = performance.now();
      const body = Buffer.concat(chunks);
      const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
      const out = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
        (up) => {
          const back: Buffer[] = [];
          up.on('data', (c: Buffer) => back.push(c));
          up.on('end', () => {
            const payload = Buffer.concat(back);
            const h = { ...up.headers, 'content-length': String(payload.length) };
            delete h['transfer-encoding'];
            delete h.connection;
            res.writeHead(up.statusCode ?? 502, h).end(payload, () => {
              calls.push({ method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString(), status: up.statusCode ?? 502, ms: performance.now() - started });
            });
          });
        },
      );
      out.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502).end(String(err));
      });
      out.end(body);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
