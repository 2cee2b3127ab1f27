import { Worker } from 'node:worker_threads';
import { askThread } from './threads.js';

/**
 * bench/fairness.ts's receivers, in a worker thread (node:http) so that they do not share the
 * event loop of what they measure. Paths under `/slow/` answer 204 after `slowMs` (a slow
 * receiver: each request holds its sender's slot that long, or until the sender gives up); every
 * other path answers 204 at once and records when the request arrived, with its `webhook-id`.
 * For the slow paths it counts what is open at once, in all and per path (one path per endpoint).
 */

const CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const arrivals = [];
const open = new Map();
let slowOpen = 0, slowMax = 0, perEndpointMax = 0, slowSeen = 0;
const server = http.createServer((req, res) => {
  const t = performance.timeOrigin + performance.now();
  req.resume();
  req.on('end', () => {
    if (!req.url.startsWith('/slow/')) {
      arrivals.push([req.headers['webhook-id'], t]);
      res.writeHead(204).end();
      return;
    }
    slowSeen++;
    slowMax = Math.max(slowMax, ++slowOpen);
    const here = (open.get(req.url) ?? 0) + 1;
    open.set(req.url, here);
    perEndpointMax = Math.max(perEndpointMax, here);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      slowOpen--;
      open.set(req.url, open.get(req.url) - 1);
    };
    res.on('close', close);
    setTimeout(() => { if (!res.destroyed) res.writeHead(204).end(); close(); }, workerData.slowMs);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'take') parentPort.postMessage({ arrivals: arrivals.splice(0) });
  if (m === 'count') parentPort.postMessage({ count: arrivals.length });
  if (m === 'slow') parentPort.postMessage({ slow: { open: slowOpen, max: slowMax, perEndpointMax, seen: slowSeen } });
});
`;

export interface SlowStats {
  /** Slow requests open now. */
  open: number;
  /** The most slow requests open at once, in all and to one endpoint. */
  max: number;
  perEndpointMax: number;
  /** Slow requests received so far. */
  seen: number;
}

export interface FairnessReceiver {
  url: string;
  /** The fast paths' arrivals since the last take: [webhook-id, epoch ms]. */
  take(): Promise<[string, number][]>;
  count(): Promise<number>;
  slow(): Promise<SlowStats>;
  close(): Promise<void>;
}

export async function startFairnessReceiver(slowMs: number): Promise<FairnessReceiver> {
  const thread = new Worker(CODE, { eval: true, workerData: { slowMs } });
  const port = await new Promise<number>((resolve) => thread.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    url: `http://127.0.0.1:${port}`,
    take: () => askThread(thread, 'take', 'arrivals'),
    count: () => askThread(thread, 'count', 'count'),
    slow: () => askThread(thread, 'slow', 'slow'),
    close: () => thread.terminate().then(() => undefined),
  };
}
