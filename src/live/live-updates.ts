import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Logger } from 'pino';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Server, type Socket } from 'socket.io';
import type { Container } from '../container.js';
import { clientAddress, trustProxy } from '../http/trust-proxy.js';
import { clientKey } from '../ratelimit/client-key.js';
import { LiveAudiences } from './audiences.js';
import { Broadcaster } from './broadcaster.js';
import { channelOf } from './channels.js';
import { HandshakeAuth, type LiveClient } from './handshake.js';
import { shareLiveUpdates } from './live-redis.js';
import { PendingConnections, type PendingConnection } from './pending-connections.js';
import { roomOf, serveConnection, wireEvent } from './protocol.js';
import { boundSendQueue, SEND_QUEUE_BYTES } from './send-queue.js';

/**
 * The live-updates endpoint (docs/live-updates.md): a Socket.IO server on the API's own HTTP
 * server, its handshake authentication and connection cap, the protocol, and the broadcaster
 * that feeds it from the outbox. REST rate limits never apply here: Socket.IO answers its own
 * path before Fastify (and its gate) sees the request; client actions have their own limit.
 */

export const LIVE_PATH = '/v2/live-updates/socket.io/';
export const LIVE_NAMESPACE = '/v2/live-updates';
/** Inbound packets larger than this close the connection (the original product's cap: 4 KB; docs/live-updates.md, "Limits"). */
const MAX_PACKET_BYTES = 4096;
const PRUNE_EVERY_MS = 10 * 60_000;

export interface LiveUpdatesOptions {
  /** The logger, when not the container's. */
  logger?: Logger;
  /** How often open connections' keys are checked for revocation (default 15 s). */
  keyCheckMs?: number;
  /** The broadcaster's safety poll (default 5 s). */
  pollMs?: number;
}

export interface LiveUpdates {
  io: Server;
  /** Open live-update connections on this node (the `tenure_live_connections` gauge). */
  connectionCount(): number;
  /** Closes every connection and stops broadcasting; the HTTP server is left to its owner. */
  close(): Promise<void>;
}

/** Serves live updates on `server` (the API's HTTP server), with the container's services. */
export async function startLiveUpdates(server: HttpServer, c: Container, o: LiveUpdatesOptions = {}): Promise<LiveUpdates> {
  const { config } = c;
  const logger = o.logger ?? c.logger;
  const store = c.stores.liveEvents;
  const { auth } = c.services;
  const handshake = new HandshakeAuth(auth, c.services.liveTokens, store);
  const trust = trustProxy(config.http.trustProxy);
  const limiter = new RateLimiterMemory({ points: config.live.actionsPerMinute, duration: 60 });
  // Guessing credentials costs a database lookup each: failed handshakes count against the
  // per-IP budget (TENURE_RATE_LIMIT_IP per minute, per node), successful ones never do.
  const failures = config.rateLimit.enabled ? new RateLimiterMemory({ points: config.rateLimit.perIp, duration: 60 }) : null;
  // The client as the REST gate counts it: its address behind TRUST_PROXY, an IPv6 one by its /64.
  const addressOf = (request: IncomingMessage) => clientKey(clientAddress(request, trust));
  const pending = new PendingConnections(config.live.maxPendingPerAddress);
  const audiences = new LiveAudiences(store, logger);
  const pendingOf = new WeakMap<Socket['conn'], PendingConnection>();

  const io = new Server(server, {
    path: LIVE_PATH,
    transports: ['websocket', 'polling'],
    maxHttpBufferSize: MAX_PACKET_BYTES,
    serveClient: false,
    // Credentials travel in the handshake, never in cookies, so any page may connect with one.
    cors: { origin: '*' },
    // Called for the request that would open a connection (a first poll, or a WebSocket upgrade
    // without a session), before anything is allocated for it: the hard stop of the pending cap
    // (src/live/pending-connections.ts). The client sees a bare transport error there, so the
    // cap itself is enforced at the handshake, where a refusal can say why.
    allowRequest: (request, callback) => {
      if (pending.mayOpen(addressOf(request))) return callback(null, true);
      callback(`Too many live-update connections from this address are waiting to authenticate (TENURE_LIVE_MAX_PENDING_PER_IP)`, false);
    },
  });
  // Every connection is pending from the moment it opens until it is admitted or closes.
  io.engine.on('connection', (conn: Socket['conn']) => {
    const connection = pending.open(addressOf(conn.request));
    pendingOf.set(conn, connection);
    conn.once('close', () => connection.settle());
    // A client reading slower than events arrive is closed, not queued for (src/live/send-queue.ts).
    boundSendQueue(conn, SEND_QUEUE_BYTES, (queued_bytes) => logger.warn({ queued_bytes }, 'live updates: a client read too slowly; closed its connection (it reconnects and resumes)'));
  });

  const { cap, redisClients } = shareLiveUpdates(io, c, logger);

  // Only the live-updates namespace exists; the default one refuses everyone.
  io.of('/').use((_socket, next) => next(refusal('NOT_FOUND', `Connect to the ${LIVE_NAMESPACE} namespace`)));
  const nsp = io.of(LIVE_NAMESPACE);

  nsp.use((socket, next) => {
    admit(socket).then(next, (err: unknown) => {
      logger.error({ err }, 'live-update handshake failed');
      next(refusal('INTERNAL_ERROR', 'The connection could not be checked; try again'));
    });
  });

  async function admit(socket: Socket): Promise<Error | undefined> {
    const connection = pendingOf.get(socket.conn);
    if (!connection?.withinCap) {
      // Told why, then closed: it must not stay open waiting for Socket.IO's connect timeout.
      setImmediate(() => socket.conn.close());
      return refusal(
        'TOO_MANY_PENDING_CONNECTIONS',
        `This address already has ${config.live.maxPendingPerAddress} live-update connections waiting to authenticate (TENURE_LIVE_MAX_PENDING_PER_IP); retry once they have connected or closed`,
      );
    }
    if (connection.checking || connection.isSettled) {
      return refusal('TOO_MANY_PENDING_CONNECTIONS', 'A handshake is already being checked on this connection');
    }
    connection.checking = true;
    try {
      return await check(socket, connection);
    } finally {
      connection.checking = false;
    }
  }

  async function check(socket: Socket, connection: PendingConnection): Promise<Error | undefined> {
    const ip = addressOf(socket.request);
    const spent = await failures?.get(ip);
    if (spent && spent.remainingPoints <= 0) {
      const seconds = Math.max(1, Math.ceil(spent.msBeforeNext / 1000));
      return refusal('RATE_LIMIT_EXCEEDED', `Too many failed connection attempts. Please retry after ${seconds} seconds.`);
    }
    const verdict = await handshake.authenticate(socket.handshake.auth);
    if (!verdict.ok) {
      await failures?.penalty(ip, 1);
      return refusal(verdict.error.code, verdict.error.message);
    }
    const client = verdict.value;
    if (!(await cap.acquire(client.projectId, socket.id))) {
      return refusal(
        'CONNECTION_LIMIT_REACHED',
        `This project already has ${config.live.maxConnectionsPerProject} live-update connections (TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT)`,
      );
    }
    // Released on the namespace's disconnect, or on the transport's close: a client gone during
    // the handshake never gets a 'connection', and its place must not stay taken.
    const release = () => {
      void cap.release(client.projectId, socket.id);
      audiences.leave(client.projectId, socket.id);
    };
    socket.conn.once('close', release);
    try {
      // Admitted only once the project's events are marked for broadcast (src/live/audiences.ts).
      await audiences.join(client.projectId, socket.id);
    } catch (err) {
      release();
      throw err;
    }
    if (socket.conn.readyState !== 'open') release();
    socket.data = client;
    connection.settle();
    return undefined;
  }

  nsp.on('connection', (socket) => {
    const client = socket.data as LiveClient;
    socket.on('disconnect', (reason) => {
      void cap.release(client.projectId, socket.id);
      audiences.leave(client.projectId, socket.id);
      // Left the namespace but kept the connection: it no longer counts as pending, and the only
      // namespace there is to join is this one, so it is closed rather than left unaccounted for.
      if (reason === 'client namespace disconnect') socket.conn.close();
    });
    serveConnection(socket, client, { store, limiter, retentionMs: config.live.eventRetentionMs, logger });
  });

  const broadcaster = new Broadcaster(
    store,
    (event) => {
      const channel = channelOf(event.type);
      if (channel) nsp.to(roomOf(event.project_id, channel)).emit(event.type, wireEvent(event, channel));
    },
    logger,
    // Without Redis an emit reaches only this process's sockets: with none connected, nobody.
    { pollMs: o.pollMs ?? 5_000, audience: config.redisUrl ? undefined : () => nsp.sockets.size > 0 },
  );
  const unsubscribers: (() => void)[] = [];
  try {
    unsubscribers.push(await c.database.wakeups.subscribe('events', () => broadcaster.wake()));
    // A revocation on any node ends the key here at once: the process's auth cache has forgotten
    // it (KeyRevocations) and its connections close. After a reconnection notifications may have
    // been missed (`null`): check every connection.
    unsubscribers.push(c.keyRevocations.subscribe((keyId) => (keyId === null ? void closeRevoked() : closeKeys(new Set([keyId])))));
    await c.keyRevocations.start();
  } catch (err) {
    unsubscribers.forEach((unsubscribe) => unsubscribe());
    await closeIo();
    throw err;
  }
  broadcaster.start();
  audiences.start();

  const keyCheck = setInterval(() => void closeRevoked(), o.keyCheckMs ?? 15_000);
  keyCheck.unref();
  const prune = setInterval(() => void pruneOld(), PRUNE_EVERY_MS);
  prune.unref();

  /** Closes this node's connections opened with these keys (or with tokens they minted). */
  function closeKeys(keyIds: ReadonlySet<string>): void {
    for (const socket of nsp.sockets.values()) {
      if (!keyIds.has((socket.data as LiveClient).keyId)) continue;
      socket.emit('message', { type: 'error', error_code: 'UNAUTHORIZED', message: 'The API key of this connection has been revoked' });
      socket.disconnect(true);
    }
  }

  /** The slow safety net: revocations nobody announced (or whose notification was lost). */
  async function closeRevoked(): Promise<void> {
    const keyIds = [...new Set([...nsp.sockets.values()].map((s) => (s.data as LiveClient).keyId))];
    try {
      closeKeys(new Set(await store.unusableKeys(keyIds)));
    } catch (err) {
      logger.warn({ err }, 'could not check the keys of live-update connections; trying again later');
    }
  }

  async function pruneOld(): Promise<void> {
    try {
      while ((await store.pruneLiveOnly(config.live.eventRetentionMs, 1_000)) === 1_000);
    } catch (err) {
      logger.warn({ err }, 'could not prune old live-only events; trying again later');
    }
  }

  async function closeIo(): Promise<void> {
    // Not io.close(): that would also close the HTTP server, which Fastify owns and closes.
    nsp.local.disconnectSockets(true);
    await Promise.allSettled([nsp.adapter.close(), io.of('/').adapter.close()]);
    io.engine.close();
    await cap.close();
    for (const client of redisClients) client.disconnect();
  }

  return {
    io,
    connectionCount: () => nsp.sockets.size,
    async close() {
      clearInterval(keyCheck);
      clearInterval(prune);
      unsubscribers.forEach((unsubscribe) => unsubscribe());
      await broadcaster.stop();
      await audiences.stop();
      await closeIo();
    },
  };
}


/** A handshake refusal: the client's `connect_error` has this message and `data.error_code`. */
function refusal(code: string, message: string): Error {
  return Object.assign(new Error(message), { data: { error_code: code } });
}
