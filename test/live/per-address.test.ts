import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_NAMESPACE, LIVE_PATH } from '../../src/live/live-updates.js';
import { unknownKey } from '../support/security.js';
import type { Tenant } from '../support/harness.js';
import { createLiveHarness, type LiveHarness } from './live-harness.js';

/**
 * What live updates count per client address, through the real server: the connections an
 * address holds open before they authenticate (TENURE_LIVE_MAX_PENDING_PER_IP, per node), and
 * the failed handshakes it may make. Both group an IPv6 client by its /64. The server trusts one
 * proxy hop, so each test speaks from addresses of its own through X-Forwarded-For.
 *
 * Connections that never authenticate are opened with the Engine.IO protocol by hand (long
 * polling), as a client that never sends its handshake would; refused clients are
 * socket.io-client's, to see what a real client is told.
 */

const MAX = 3;
const FAILURES = 3;
let lh: LiveHarness;
beforeAll(async () => {
  lh = await createLiveHarness({
    env: { TRUST_PROXY: 'true', TENURE_LIVE_MAX_PENDING_PER_IP: String(MAX), TENURE_RATE_LIMIT_IP: String(FAILURES) },
  });
});
afterAll(() => lh.close());

const via = (address: string) => ({ 'x-forwarded-for': address });
const authOf = (t: Tenant) => ({ token: t.key, project_id: t.projectId });

/** An Engine.IO connection opened by hand over long polling, which sends only what it is told to. */
interface RawConnection {
  /** Sends Socket.IO packets, all in one request. */
  send(...packets: string[]): Promise<void>;
  /** Polls until `count` packets (pings answered and left out) have arrived. */
  receive(count: number): Promise<string[]>;
  close(): Promise<void>;
}

const raws: RawConnection[] = [];
afterEach(async () => {
  await Promise.all(raws.splice(0).map((r) => r.close()));
});

async function openRaw(address: string): Promise<RawConnection> {
  const base = `${lh.url}${LIVE_PATH}?EIO=4&transport=polling`;
  const opened = await fetch(base, { headers: via(address) });
  const body = await opened.text();
  if (opened.status !== 200) throw Object.assign(new Error(`not opened: ${opened.status} ${body}`), { status: opened.status, body });
  const url = `${base}&sid=${(JSON.parse(body.slice(1)) as { sid: string }).sid}`;
  const post = async (payload: string) => {
    await (await fetch(url, { method: 'POST', body: payload, headers: { ...via(address), 'content-type': 'text/plain' } })).text();
  };
  let closed = false;
  const raw: RawConnection = {
    send: (...packets) => post(packets.map((p) => `4${p}`).join('\x1e')),
    async receive(count) {
      const got: string[] = [];
      while (got.length < count) {
        const res = await fetch(url, { headers: via(address) });
        const text = await res.text();
        if (res.status !== 200) return [...got, `closed: ${res.status}`];
        for (const packet of text.split('\x1e')) {
          if (packet === '2') await post('3');
          else if (packet === '1') return [...got, 'closed'];
          else if (packet.startsWith('4')) got.push(packet.slice(1));
        }
      }
      return got;
    },
    async close() {
      if (closed) return;
      closed = true;
      await post('1').catch(() => undefined);
    },
  };
  raws.push(raw);
  return raw;
}

const connectPacket = (auth: Record<string, unknown>) => `0${LIVE_NAMESPACE},${JSON.stringify(auth)}`;
/** The server's answer to an accepted handshake. */
const ADMITTED = new RegExp(`^0${LIVE_NAMESPACE},\\{"sid":`);
/** The message an admitted connection gets next. */
const READY = new RegExp(`^2${LIVE_NAMESPACE},\\["message",\\{"type":"ready"`);

describe('connections awaiting authentication, per address', () => {
  it.each(['websocket', 'polling'] as const)(
    `refuses a connection past ${MAX} waiting ones of one /64 with TOO_MANY_PENDING_CONNECTIONS (%s), and lets other clients in`,
    async (transport) => {
      const t = await lh.tenant();
      const prefix = transport === 'websocket' ? '2001:db8:10:1' : '2001:db8:10:2';
      for (let i = 1; i <= MAX; i++) await openRaw(`${prefix}::${i}`);
      const refused = lh.client(authOf(t), { transports: [transport], headers: via(`${prefix}:ffff::99`) });
      expect(await refused.refusal()).toStrictEqual({
        error_code: 'TOO_MANY_PENDING_CONNECTIONS',
        message: `This address already has ${MAX} live-update connections waiting to authenticate (TENURE_LIVE_MAX_PENDING_PER_IP); retry once they have connected or closed`,
      });
      await refused.disconnected();
      // Another /64, and an IPv4 client, are other clients.
      await lh.client(authOf(t), { transports: [transport], headers: via(`${prefix.slice(0, -1)}9::1`) }).ready();
      await lh.client(authOf(t), { transports: [transport], headers: via('198.51.100.21') }).ready();
    },
  );

  it('frees a place when a waiting connection closes, and when one authenticates', async () => {
    const t = await lh.tenant();
    const waiting = [];
    for (let i = 1; i <= MAX; i++) waiting.push(await openRaw(`2001:db8:11:1::${i}`));
    const client = () => lh.client(authOf(t), { headers: via('2001:db8:11:1::100') });
    expect((await client().refusal()).error_code).toBe('TOO_MANY_PENDING_CONNECTIONS');

    await waiting[0]!.close();
    // Admitted at once, which frees the place again.
    await client().ready();

    waiting.push(await openRaw('2001:db8:11:1::4'));
    expect((await client().refusal()).error_code).toBe('TOO_MANY_PENDING_CONNECTIONS');
    // The place of a connection that authenticates is free once it is admitted.
    await waiting[1]!.send(connectPacket(authOf(t)));
    expect((await waiting[1]!.receive(1))[0]).toMatch(ADMITTED);
    await client().ready();
  });

  it('lets a connection that failed its handshake keep its place and retry on it', async () => {
    const t = await lh.tenant();
    const raw = await openRaw('2001:db8:12:1::1');
    await raw.send(connectPacket({ token: 'garbage', project_id: t.projectId }));
    expect(JSON.parse((await raw.receive(1))[0]!.slice(`4${LIVE_NAMESPACE},`.length))).toMatchObject({ data: { error_code: 'UNAUTHORIZED' } });
    await raw.send(connectPacket(authOf(t)));
    expect((await raw.receive(1))[0]).toMatch(ADMITTED);
  });

  it('closes a connection that leaves the namespace, rather than keep it open unauthenticated', async () => {
    const t = await lh.tenant();
    const raw = await openRaw('2001:db8:15:1::1');
    await raw.send(connectPacket(authOf(t)));
    expect((await raw.receive(1))[0]).toMatch(ADMITTED);
    await raw.send(`1${LIVE_NAMESPACE},`);
    // The `ready` message that follows admission may come in the same poll or the next one.
    const rest = await raw.receive(2);
    expect(rest.at(-1), rest.join('\n')).toBe('closed');
    expect(rest.slice(0, -1).every((p) => READY.test(p)), rest.join('\n')).toBe(true);
  });

  it('checks one handshake at a time on a connection', async () => {
    const t = await lh.tenant();
    const raw = await openRaw('2001:db8:13:1::1');
    // Two handshakes in one request: the second arrives while the first is being checked.
    await raw.send(connectPacket(authOf(t)), connectPacket(authOf(t)));
    const [first, second] = await raw.receive(2);
    expect(first).toBe(
      `4${LIVE_NAMESPACE},${JSON.stringify({ message: 'A handshake is already being checked on this connection', data: { error_code: 'TOO_MANY_PENDING_CONNECTIONS' } })}`,
    );
    expect(second).toMatch(ADMITTED);
  });

  it(`refuses to open a connection at all once the /64 holds ${2 * MAX}, and closes those it refuses`, async () => {
    const t = await lh.tenant();
    const held = [];
    for (let i = 1; i <= 2 * MAX; i++) held.push(await openRaw(`2001:db8:14:1::${i}`));
    // The request that would open one more is refused before anything is allocated for it.
    const refused = await openRaw('2001:db8:14:1::99').catch((err: { status: number; body: string }) => err);
    expect(refused).toMatchObject({
      status: 403,
      body: JSON.stringify({ code: 4, message: 'Too many live-update connections from this address are waiting to authenticate (TENURE_LIVE_MAX_PENDING_PER_IP)' }),
    });
    const client = lh.client(authOf(t), { headers: via('2001:db8:14:1::100') });
    expect(await client.refusal()).toStrictEqual({ error_code: undefined, message: 'websocket error' });
    // A connection opened past the cap is told why at its handshake, then closed.
    const late = held[MAX]!;
    await late.send(connectPacket(authOf(t)));
    const answer = await late.receive(2);
    expect(answer[0]).toContain('"error_code":"TOO_MANY_PENDING_CONNECTIONS"');
    expect(answer[1]).toMatch(/^closed/);
    // Which made room for one more connection to open.
    await openRaw('2001:db8:14:1::100');
  });
});

describe('failed handshakes, per address', () => {
  it(`refuses a /64 after ${FAILURES} failed handshakes from any of its addresses, and not another /64`, async () => {
    const t = await lh.tenant();
    for (let i = 1; i <= FAILURES; i++) {
      const failed = lh.client({ token: unknownKey(), project_id: t.projectId }, { headers: via(`2001:db8:20:1::${i}`) });
      expect((await failed.refusal()).error_code).toBe('UNAUTHORIZED');
    }
    const blocked = await lh.client(authOf(t), { headers: via('2001:db8:20:1:aaaa::1') }).refusal();
    expect(blocked.error_code).toBe('RATE_LIMIT_EXCEEDED');
    await lh.client(authOf(t), { headers: via('2001:db8:20:2::1') }).ready();
  });
});
