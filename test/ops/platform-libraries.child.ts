import { MessageChannel } from 'node:worker_threads';
import { register } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Run by platform-libraries.test.ts (`node --import tsx`): starts the server as `tenure serve`
 * does (storage, HTTP, the worker runtime), lets its workers look for work a few times, stops it,
 * and prints every module URL resolved meanwhile as JSON, on the last line of stdout (the log's
 * errors, if any, come before it). A module hook records them, registered before any of the app's
 * modules is imported.
 */

const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;

const resolved = new Set<string>();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url: string) => resolved.add(url));
port1.unref();
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { port: port2 }, transferList: [port2] });

const { loadConfig } = await import('../../src/config.js');
const { createLogger } = await import('../../src/logger.js');
const { startServer } = await import('../../src/server.js');
const server = await startServer(loadConfig(), createLogger('error'));
// The access workers' first rounds (taking the leases of bots with work: none here) are made at once.
await sleep(1_000);
await server.close();
// The hooks' last messages cross threads: a moment for them to arrive.
await sleep(100);
process.stdout.write(`\n${JSON.stringify([...resolved])}\n`);
process.exit(0);
