import type { Logger } from 'pino';
import type { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Socket } from 'socket.io';
import { isUuid } from '../domain/ids.js';
import type { TenureEvent } from '../domain/events.js';
import { replayStart, type LiveEventsStore } from '../store/live-events.store.js';
import { CHANNELS, isChannel, typesOf, type Channel } from './channels.js';
import type { LiveClient } from './handshake.js';

/**
 * One connection's side of the protocol (docs/live-updates.md "Messages"). Every client packet is
 * counted against the connection's action limit; actions arrive on the `message` event and every
 * answer leaves on it. A wrong action, channel or payload gets an `error` message and the
 * connection stays up.
 */

export type ServerMessage =
  | { type: 'ready'; connection_id: string }
  | { type: 'subscribed'; channel: Channel; replayed?: number }
  | { type: 'unsubscribed'; channel: Channel }
  | { type: 'pong' }
  | { type: 'error'; error_code: LiveErrorCode; message: string; channel?: string; retry_after?: number };

export type LiveErrorCode =
  | 'INVALID_MESSAGE'
  | 'UNKNOWN_ACTION'
  | 'UNKNOWN_CHANNEL'
  | 'VALIDATION_ERROR'
  | 'RESUME_UNAVAILABLE'
  | 'RATE_LIMIT_EXCEEDED'
  | 'UNAUTHORIZED'
  | 'INTERNAL_ERROR';

/** The room of a project's channel; the broadcaster emits to the same name. */
export const roomOf = (projectId: string, channel: Channel): string => `${projectId}:${channel}`;

/** A broadcast as sockets receive it: the webhook event object plus its channel. */
export const wireEvent = (event: TenureEvent, channel: Channel) => ({ ...event, channel });

/**
 * A resumed subscription replays its backlog a page at a time, and reads the next page only once
 * the connection has written the last one out: a resume holds at most one page in memory, however
 * long the backlog (up to TENURE_EVENT_RETENTION) and however slowly the client reads.
 */
const REPLAY_PAGE = 500;

export interface ProtocolDeps {
  store: LiveEventsStore;
  limiter: RateLimiterMemory;
  retentionMs: number;
  logger: Logger;
}

export function serveConnection(socket: Socket, client: LiveClient, deps: ProtocolDeps): void {
  const send = (message: ServerMessage): void => void socket.emit('message', message);
  const error = (error_code: LiveErrorCode, message: string, extra: { channel?: string; retry_after?: number } = {}): void =>
    send({ type: 'error', error_code, message, ...extra });

  // Every packet counts, whatever its event name: a flood of unknown events costs the same.
  socket.use(([event], next) => {
    deps.limiter.consume(socket.id).then(
      () => {
        if (event === 'message') return next();
        error('UNKNOWN_ACTION', `Send actions on the "message" event (got "${String(event).slice(0, 64)}")`);
      },
      (refusal: { msBeforeNext?: number }) => {
        const seconds = Math.max(1, Math.ceil((refusal.msBeforeNext ?? 1000) / 1000));
        error('RATE_LIMIT_EXCEEDED', `Too many actions on this connection. Please retry after ${seconds} seconds.`, {
          retry_after: seconds,
        });
      },
    );
  });

  socket.on('message', (payload: unknown) => {
    handle(payload).catch((err: unknown) => {
      deps.logger.error({ err, connection_id: socket.id }, 'live-update action failed');
      error('INTERNAL_ERROR', 'The action could not be completed; try again');
    });
  });

  async function handle(payload: unknown): Promise<void> {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return error('INVALID_MESSAGE', 'A message must be an object such as {"action": "subscribe", "channel": "memberships"}');
    }
    const { action, channel, after } = payload as { action?: unknown; channel?: unknown; after?: unknown };
    if (action === 'ping') return send({ type: 'pong' });
    if (action !== 'subscribe' && action !== 'unsubscribe') {
      return error('UNKNOWN_ACTION', `Unknown action ${JSON.stringify(action ?? null)?.slice(0, 64)}; actions: subscribe, unsubscribe, ping`);
    }
    if (!isChannel(channel)) {
      const shown = typeof channel === 'string' ? `"${channel.slice(0, 64)}"` : 'missing';
      return error('UNKNOWN_CHANNEL', `Unknown channel (${shown}); channels: ${CHANNELS.join(', ')}`, {
        ...(typeof channel === 'string' ? { channel: channel.slice(0, 64) } : {}),
      });
    }
    const room = roomOf(client.projectId, channel);
    if (action === 'unsubscribe') {
      await socket.leave(room);
      return send({ type: 'unsubscribed', channel });
    }
    if (after === undefined || after === null) {
      await socket.join(room);
      return send({ type: 'subscribed', channel });
    }
    if (typeof after !== 'string' || !isUuid(after)) {
      return error('VALIDATION_ERROR', 'after must be the event_id (a UUID) of the last event received', { channel });
    }
    const point = await deps.store.resumePoint(client.projectId, after, deps.retentionMs);
    if (!point) {
      return error('RESUME_UNAVAILABLE', `No event ${after} in this project: resubscribe without "after" and reload the state over the REST API`, { channel });
    }
    if (!point.retained) {
      return error('RESUME_UNAVAILABLE', `Event ${after} is older than the event retention: resubscribe without "after" and reload the state over the REST API`, { channel });
    }
    // Join first, then replay: an event committed in between arrives live, replayed, or both
    // (at least once; event_id dedupes), never neither.
    await socket.join(room);
    let replayed: number;
    try {
      replayed = await replayInTurn(channel, { eventId: after, seq: point.seq });
    } catch (err) {
      // Not subscribed after all: the client is told the action failed and may retry it.
      await socket.leave(room);
      throw err;
    }
    send({ type: 'subscribed', channel, replayed });
  }

  async function replay(channel: Channel, after: { eventId: string; seq: number }): Promise<number> {
    const types = typesOf(channel);
    let cursor = replayStart(after.seq);
    let sent = 0;
    for (;;) {
      const page = await deps.store.replayPage(client.projectId, types, after, cursor, REPLAY_PAGE, deps.retentionMs);
      for (const event of page.events) socket.emit(event.type, wireEvent(event, channel));
      sent += page.events.length;
      cursor = page.cursor;
      if (page.events.length < REPLAY_PAGE) return sent;
      await written(socket.conn);
      if (socket.disconnected || socket.conn.readyState !== 'open') return sent;
    }
  }

  // Resumes replay one after another: several at once would each hold a page.
  let replays: Promise<unknown> = Promise.resolve();
  function replayInTurn(channel: Channel, after: { eventId: string; seq: number }): Promise<number> {
    const turn = replays.then(() => replay(channel, after));
    replays = turn.catch(() => undefined);
    return turn;
  }

  socket.on('disconnect', () => void deps.limiter.delete(socket.id));
  send({ type: 'ready', connection_id: socket.id });
}

/**
 * Resolves once the connection has handed everything queued to the network, or closed. Engine.IO
 * queues what the transport cannot take yet and flushes it whenever the transport is writable
 * again (a WebSocket once its last frame was written to the socket, long polling once the client
 * polls again), so a writable transport means an empty queue. Re-checked on every `ready` of the
 * transport in use, after Engine.IO's own flush (its listener comes first), and after an upgrade
 * to WebSocket has flushed the queue to the new transport.
 */
function written(conn: Socket['conn']): Promise<void> {
  return new Promise((resolve) => {
    let transport = conn.transport;
    const check = () => {
      if (conn.readyState !== 'open' || conn.transport.writable) {
        transport.off('ready', check);
        conn.off('upgrade', afterUpgrade);
        conn.off('close', check);
        return resolve();
      }
      if (transport !== conn.transport) {
        transport.off('ready', check);
        transport = conn.transport;
        transport.on('ready', check);
      }
    };
    // Emitted before the queue is flushed to the new transport, which happens in the same tick.
    const afterUpgrade = () => queueMicrotask(check);
    transport.on('ready', check);
    conn.on('upgrade', afterUpgrade);
    conn.on('close', check);
    check();
  });
}
