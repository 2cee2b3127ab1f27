import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket as NetSocket } from 'node:net';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { Server, type Socket } from 'socket.io';
import { io as connect, type Socket as ClientSocket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { boundSendQueue, SEND_QUEUE_BYTES } from './send-queue.js';

/**
 * A slow client cannot grow the process without bound: a real Socket.IO server whose connections
 * have the bound, a WebSocket client that stops reading, and a flood of events at it.
 */

const PAYLOAD = 'x'.repeat(1000);

/** Engine.IO's queue of packets not yet handed to the transport (private in its types). */
const writeBufferOf = (conn: Socket['conn']) => (conn as unknown as { writeBuffer: { data?: unknown }[] }).writeBuffer;

interface Harness {
  http: HttpServer;
  io: Server;
  client: ClientSocket;
  server: Socket;
  /** The largest Engine.IO writeBuffer seen (bytes of packet data) and the overflows reported. */
  largestQueued: () => number;
  overflows: number[];
}

let open: Harness | undefined;
afterEach(async () => {
  open?.client.close();
  await open?.io.close();
  open = undefined;
});

async function harness(maxBytes: number): Promise<Harness> {
  const http = createServer();
  const io = new Server(http, { transports: ['websocket'] });
  const overflows: number[] = [];
  let largest = 0;
  io.engine.on('connection', (conn: Socket['conn']) => {
    boundSendQueue(conn, maxBytes, (bytes) => overflows.push(bytes));
    // Measured after the bound's own listener: what the buffer holds once a packet is in.
    conn.on('packetCreate', () => {
      queueMicrotask(() => {
        const bytes = writeBufferOf(conn).reduce((sum, p) => sum + (typeof p.data === 'string' ? Buffer.byteLength(p.data) : 0), 0);
        largest = Math.max(largest, bytes);
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const serverSide = once(io, 'connection') as Promise<[Socket]>;
  const client = connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, { transports: ['websocket'], reconnection: false });
  const [server] = await serverSide;
  await new Promise<void>((resolve) => client.once('connect', resolve));
  open = { http, io, client, server, largestQueued: () => largest, overflows };
  return open;
}

/** Emits `count` events of ~1 KB to the client, `burst` at a time with a turn of the event loop between (as the broadcaster does between claims). */
async function flood(server: Socket, count: number, burst: number): Promise<number> {
  let sent = 0;
  while (sent < count && server.connected) {
    for (let i = 0; i < burst && sent < count; i++, sent++) server.emit('membership.extended', { n: sent, payload: PAYLOAD });
    await tick();
  }
  return sent;
}

describe('boundSendQueue', () => {
  it('closes a connection that stops reading once its queue passes the bound, and never holds more', async () => {
    const h = await harness(SEND_QUEUE_BYTES);
    // The client stops reading its TCP socket: the kernel's buffers fill, then Engine.IO's queue.
    const engine = h.client.io.engine as unknown as { transport: { ws: { _socket: NetSocket } } };
    engine.transport.ws._socket.pause();
    const closed = once(h.server, 'disconnect') as Promise<[string]>;
    // 200 MB offered: far more than the kernel buffers, so only the bound can end it.
    const sent = await flood(h.server, 200_000, 500);
    const [reason] = await closed;
    expect(reason).toBe('forced close');
    expect(sent).toBeLessThan(200_000);
    expect(h.overflows).toHaveLength(1);
    expect(h.overflows[0]).toBeGreaterThan(SEND_QUEUE_BYTES);
    // Never more than the bound plus the one packet that crossed it.
    expect(h.largestQueued()).toBeGreaterThan(0);
    expect(h.largestQueued()).toBeLessThanOrEqual(SEND_QUEUE_BYTES + 1100);
    expect(writeBufferOf(h.server.conn)).toHaveLength(0);
  });

  it('leaves a client that keeps up connected through bursts of 500 events', async () => {
    const h = await harness(SEND_QUEUE_BYTES);
    let received = 0;
    h.client.on('membership.extended', () => void received++);
    const sent = await flood(h.server, 5_000, 500);
    for (let waited = 0; received < sent && waited < 10_000; waited += 20) await sleep(20);
    expect(sent).toBe(5_000);
    expect(received).toBe(5_000);
    expect(h.overflows).toStrictEqual([]);
    expect(h.server.connected).toBe(true);
  });

  it('counts what waits, not what was sent: a small bound cuts a slow client, not a fast one', async () => {
    const fast = await harness(64 * 1024);
    let received = 0;
    fast.client.on('membership.extended', () => void received++);
    await flood(fast.server, 1_000, 20);
    for (let waited = 0; received < 1_000 && waited < 10_000; waited += 20) await sleep(20);
    expect(received).toBe(1_000);
    expect(fast.overflows).toStrictEqual([]);
  });
});
