import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { standardWebhooksSecret } from '../../src/webhooks/signing.js';

/**
 * A real webhook receiver for tests: node:http on 127.0.0.1, port 0. It records every request
 * (raw body bytes as a string) and answers as its responder says — a status, headers and body,
 * or `stall` (never answer, until the test releases or closes it).
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'stall';
export type Responder = (request: ReceivedRequest, index: number) => Answer;

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: ReceivedRequest[];
  respond(responder: Responder): void;
  /** Waits (bounded) until `count` requests have arrived — or `predicate` holds — and returns them. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  waitUntil(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Answers every stalled request with `status` (they were held open). */
  releaseStalled(status?: number): void;
  close(): Promise<void>;
}

export const ok200: Responder = () => ({ status: 200, body: 'ok' });

export async function startReceiver(responder: Responder = ok200): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const stalled: ServerResponse[] = [];
  let respond = responder;
  const waiters = new Set<() => void>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const index = requests.push(request) - 1;
      for (const w of [...waiters]) w();
      const answer = respond(request, index);
      if (answer === 'stall') {
        stalled.push(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const waitUntil = (predicate: (r: ReceivedRequest[]) => boolean, timeoutMs = 15_000) =>
    new Promise<ReceivedRequest[]>((resolve, reject) => {
      const check = () => {
        if (predicate(requests)) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...requests]);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests so far)`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(next) {
      respond = next;
    },
    waitFor: (count, timeoutMs) => waitUntil((r) => r.length >= count, timeoutMs),
    waitUntil,
    releaseStalled(status = 200) {
      for (const res of stalled.splice(0)) {
        if (!res.destroyed) res.writeHead(status).end();
      }
    },
    async close() {
      stalled.splice(0);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const header = (r: ReceivedRequest, name: string): string => {
  const value = r.headers[name];
  if (typeof value !== 'string') throw new Error(`missing header ${name}`);
  return value;
};

/**
 * Verifies `X-Webhook-Signature` as a receiver of the original product does, with node's crypto:
 * any `v1` entry equal to hex HMAC-SHA256(secret as ASCII, "<t>.<body>"), in constant time.
 * Returns the signed timestamp, or null when no entry matches.
 */
export function verifyProductSignature(r: ReceivedRequest, secret: string): number | null {
  const parts = header(r, 'x-webhook-signature')
    .split(',')
    .map((p) => p.split('=') as [string, string]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return null;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${r.body}`).digest('hex'));
  const match = parts
    .filter(([k]) => k === 'v1')
    .some(([, v]) => v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
  return match ? t : null;
}

/** Verifies the Standard Webhooks headers with the npm `standardwebhooks` package; returns the parsed body. */
export function verifyStandardSignature(r: ReceivedRequest, secret: string): unknown {
  return new Webhook(standardWebhooksSecret(secret)).verify(r.body, {
    'webhook-id': header(r, 'webhook-id'),
    'webhook-timestamp': header(r, 'webhook-timestamp'),
    'webhook-signature': header(r, 'webhook-signature'),
  });
}
