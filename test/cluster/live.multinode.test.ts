import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LiveClient } from '../live/live-harness.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/processes.js';

/**
 * Two real server processes (`node dist/main.js`) share this file's PostgreSQL
 * database and the Redis at REDIS_URL. A change committed through node A reaches a client
 * connected to node B, exactly once, although both nodes run a broadcaster; the per-project
 * connection cap counts both nodes' connections; a token minted by one node opens the other.
 */

const CAP = 3;
let h: Harness;
let nodes: ServerProcess[] = [];
const clients: LiveClient[] = [];

interface Project {
  id: string;
  key: string;
}

let projects: Project[];

beforeAll(async () => {
  h = await createHarness();
  projects = [];
  for (let i = 0; i < 3; i++) {
    const t = await h.tenant();
    projects.push({ id: t.projectId, key: t.key });
  }
  const env = {
    DATABASE_URL: h.databaseUrl!,
    REDIS_URL: process.env.REDIS_URL!,
    // A prefix of this run's own, so concurrent runs sharing the Redis never meet.
    REDIS_KEY_PREFIX: `tenure-test-${randomBytes(6).toString('hex')}:`,
    TENURE_WORKER: 'false',
    TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT: String(CAP),
  };
  nodes = await Promise.all([startServerProcess(env), startServerProcess(env)]);
});

afterAll(async () => {
  for (const c of clients) c.socket.disconnect();
  await Promise.all(nodes.map((n) => n.stop()));
  await h?.close();
});

function connect(node: ServerProcess, auth: Record<string, unknown>): LiveClient {
  const c = new LiveClient(node.url, auth, ['websocket']);
  clients.push(c);
  return c;
}

async function rest(node: ServerProcess, p: Project, method: string, path: string, body?: unknown) {
  const res = await fetch(`${node.url}/v2/projects/${p.id}${path}`, {
    method,
    headers: { authorization: `Bearer ${p.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return res.status === 204 ? {} : ((JSON.parse(text) as { data: Record<string, unknown> }).data);
}

it('delivers an extend committed on node A to a client on node B, exactly once', async () => {
  const [a, b] = nodes as [ServerProcess, ServerProcess];
  const p = projects[0]!;
  const onB = connect(b, { token: p.key, project_id: p.id });
  const onA = connect(a, { token: p.key, project_id: p.id });
  for (const c of [onB, onA]) {
    await c.ready();
    await c.act({ action: 'subscribe', channel: 'memberships' }, 'subscribed');
  }
  const member = await rest(a, p, 'POST', '/memberships', { user_id: '424242', end_date: new Date(Date.now() + 10 * 86_400_000).toISOString() });
  const extended = await rest(a, p, 'PATCH', '/memberships/424242/extend', { extend: Date.now() + 40 * 86_400_000 });
  // A sentinel after the extend: once it is in, every copy of the extend would be too.
  await rest(a, p, 'DELETE', `/memberships/${member.membership_id as string}`);
  for (const c of [onB, onA]) {
    await c.until(() => c.events().some((e) => e.event === 'membership.deleted'), 'the sentinel');
    const extends_ = c.events().filter((e) => e.event === 'membership.extended');
    expect(extends_, JSON.stringify(c.events())).toHaveLength(1);
    expect(extends_[0]!.payload).toMatchObject({
      type: 'membership.extended',
      project_id: p.id,
      channel: 'memberships',
      data: { membership: { user_id: '424242', membership_end_date: extended.new_end_date }, previous_end_date: member.membership_end_date },
    });
    expect(c.events().map((e) => e.event)).toStrictEqual(['membership.created', 'membership.extended', 'membership.deleted']);
  }
});

it('caps connections per project across both nodes', async () => {
  const [a, b] = nodes as [ServerProcess, ServerProcess];
  const p = projects[1]!;
  const open = [connect(a, { token: p.key, project_id: p.id }), connect(b, { token: p.key, project_id: p.id }), connect(a, { token: p.key, project_id: p.id })];
  for (const c of open) await c.ready();
  const refused = connect(b, { token: p.key, project_id: p.id });
  expect(await refused.refusal()).toStrictEqual({
    error_code: 'CONNECTION_LIMIT_REACHED',
    message: `This project already has ${CAP} live-update connections (TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT)`,
  });
  // Closing one on node A frees a place that node B can give (once A has seen the disconnect).
  open[0]!.socket.disconnect();
  let admitted = false;
  for (let attempt = 0; attempt < 50 && !admitted; attempt++) {
    const c = connect(b, { token: p.key, project_id: p.id });
    await c.until(() => c.socket.connected || c.connectError, 'an answer to the handshake');
    admitted = c.socket.connected;
  }
  expect(admitted).toBe(true);
});

it('accepts on node B a token minted by node A', async () => {
  const [a, b] = nodes as [ServerProcess, ServerProcess];
  const p = projects[2]!;
  const minted = await rest(a, p, 'POST', '/integrations/live-updates/tokens');
  const c = connect(b, { token: minted.token, project_id: p.id });
  await c.ready();
  expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
});
