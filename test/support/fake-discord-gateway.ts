import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Bot, DiscordWorld, Guild, MemberChange } from './fake-discord-model.js';

/**
 * The fake Discord's gateway (docs: Topics, "Gateway" and "Gateway Events"; Opcodes and Status
 * Codes, "Gateway Opcodes" and "Gateway Close Event Codes"), on the fake's own HTTP server: what a
 * bot's WebSocket connection sees, written from the docs, not from what tenure sends.
 *
 * - `GET /gateway/bot` (REST, `Authorization: Bot <token>`, else 401 like every route):
 *   `{url, shards: 1, session_start_limit: {total: 1000, remaining, reset_after, max_concurrency: 1}}`;
 *   `remaining` counts the identifies of the day ("Session Start Limit Object").
 * - The WebSocket at `url` takes `?v=10&encoding=json` ("Connecting"): another version closes
 *   4012 Invalid API version, another encoding 4002 Decode error (the fake speaks JSON only, without
 *   transport compression). On open: op 10 Hello `{heartbeat_interval}`.
 * - op 1 Heartbeat (allowed before identifying) is answered with op 11 Heartbeat ACK. A payload
 *   that is not JSON closes 4002; an unknown opcode 4001; anything but a heartbeat, Identify or
 *   Resume before identifying 4003 Not authenticated; a second Identify 4005; more than 120
 *   payloads a minute 4008 Rate limited ("Rate Limiting").
 * - op 2 Identify `{token, properties, intents, shard?}`: a token no bot has closes 4004
 *   Authentication failed; intent bits Discord does not define close 4013 Invalid intent(s); a
 *   privileged intent the application has not switched on in the Developer Portal closes 4014
 *   Disallowed intent(s) (GUILD_MEMBERS follows the bot's `guildMembersIntent`; GUILD_PRESENCES and
 *   MESSAGE_CONTENT are never on here); `shard` outside `[0, count)` closes 4010 Invalid shard.
 *   Otherwise READY `{v, user, guilds (unavailable), session_id, resume_gateway_url, shard,
 *   application}`, then, with the GUILDS intent, a GUILD_CREATE for each guild of the bot in that
 *   shard (`(guild_id >> 22) % num_shards`), members included only below `large_threshold`
 *   (default 50).
 * - Dispatches (op 0) carry `s`, the session's sequence, from 1. GUILD_MEMBER_ADD (the member and
 *   `guild_id`), GUILD_MEMBER_UPDATE (`guild_id`, `roles`, `user`, …) and GUILD_MEMBER_REMOVE
 *   (`guild_id`, `user`) go to the sessions identified with GUILD_MEMBERS of every bot in the
 *   guild, whoever made the change: a test's hand, or a bot's own REST call.
 * - op 6 Resume `{token, session_id, seq}` (on `resume_gateway_url` or the first URL): the events
 *   the session was sent after `seq` again, then RESUMED; an unknown session (or another bot's) gets
 *   op 9 Invalid Session `false`; a `seq` ahead of the session closes 4007 Invalid seq.
 * - Not modelled: closing a connection whose heartbeats stop, op 8 Request Guild Members, presences;
 *   a token reset does not close the bot's open connections (a test drops them with `disconnect`,
 *   and the resume with the old token is refused 4004).
 *
 * Test hooks: the changes of fake-discord.ts dispatch by themselves; `disconnect` closes a bot's
 * connections with a code (1000 and 4000 are resumable), `reconnect` sends op 7 Reconnect;
 * `openConnections` counts a bot's identified connections open now; `log` keeps every Identify and
 * Resume with its token and how it ended.
 */

/** Gateway intents (docs: Gateway, "List of Intents"): the bits Discord defines, and the privileged ones. */
export const INTENTS = { GUILDS: 1 << 0, GUILD_MEMBERS: 1 << 1, GUILD_PRESENCES: 1 << 8, MESSAGE_CONTENT: 1 << 15 } as const;
const DEFINED_INTENTS = (1 << 26) - 1;

export interface GatewayLogEntry {
  op: 'identify' | 'resume';
  token: string;
  /** The bot the token belongs to, or null (an unknown token). */
  botId: string | null;
  /** The close code it was refused with, or null when it was accepted. */
  closedWith: number | null;
  at: number;
}

interface Session {
  id: string;
  bot: Bot;
  intents: number;
  shard: [number, number];
  seq: number;
  /** Every dispatch of the session, for a resume (a test's sessions are short). */
  sent: { s: number; t: string; d: unknown }[];
  socket: WebSocket | null;
}

interface Connection {
  socket: WebSocket;
  session: Session | null;
  received: number[];
}

export interface FakeGatewayOptions {
  /** Op 10 Hello's `heartbeat_interval` (Discord's is ~41 s). */
  heartbeatIntervalMs?: number;
}

export class FakeGateway {
  readonly log: GatewayLogEntry[] = [];
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sessions = new Map<string, Session>();
  private readonly connections = new Set<Connection>();
  private readonly identifiesLeft = new Map<string, number>();
  private url = '';

  constructor(
    private readonly world: DiscordWorld,
    private readonly options: FakeGatewayOptions = {},
  ) {
    world.memberListeners.push((change) => this.memberChanged(change));
  }

  /** Serves the WebSocket on `server` (the fake's REST server) at `/gateway`. */
  attach(server: Server, port: number): void {
    this.url = `ws://127.0.0.1:${port}/gateway`;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://fake-discord');
      if (url.pathname !== '/gateway' && url.pathname !== '/gateway-resume') return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, url.searchParams));
    });
  }

  /** `GET /gateway/bot` (docs: Gateway, "Get Gateway Bot"). */
  gatewayBot(bot: Bot) {
    return {
      url: this.url,
      shards: 1,
      session_start_limit: { total: 1000, remaining: this.identifiesLeft.get(bot.id) ?? 1000, reset_after: 86_400_000, max_concurrency: 1 },
    };
  }

  openConnections(botId: string): number {
    return [...this.connections].filter((c) => c.session?.bot.id === botId && c.socket.readyState === WebSocket.OPEN).length;
  }

  disconnect(botId: string, code = 4000): void {
    for (const c of this.connections) if (c.session?.bot.id === botId) c.socket.close(code, 'fake discord: disconnected by the test');
  }

  reconnect(botId: string): void {
    for (const c of this.connections) if (c.session?.bot.id === botId) this.send(c, { op: 7, d: null });
  }

  close(): void {
    for (const c of this.connections) c.socket.terminate();
    this.wss.close();
  }

  private open(socket: WebSocket, query: URLSearchParams): void {
    const c: Connection = { socket, session: null, received: [] };
    this.connections.add(c);
    socket.on('close', () => {
      this.connections.delete(c);
      if (c.session?.socket === socket) c.session.socket = null;
    });
    if (query.get('v') !== '10') return socket.close(4012, 'Invalid API version');
    if ((query.get('encoding') ?? 'json') !== 'json' || query.has('compress')) return socket.close(4002, 'Decode error');
    this.send(c, { op: 10, d: { heartbeat_interval: this.options.heartbeatIntervalMs ?? 41_250 } });
    socket.on('message', (data, isBinary) => this.receive(c, isBinary ? null : data.toString()));
  }

  private receive(c: Connection, text: string | null): void {
    const now = Date.now();
    c.received = c.received.filter((t) => t > now - 60_000);
    c.received.push(now);
    if (c.received.length > 120) return c.socket.close(4008, 'Rate limited.');
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(text ?? '') as typeof payload;
    } catch {
      return c.socket.close(4002, 'Error while decoding payload.');
    }
    switch (payload.op) {
      case 1:
        return this.send(c, { op: 11 });
      case 2:
        return this.identify(c, payload.d as Record<string, unknown> | null);
      case 6:
        return this.resume(c, payload.d as Record<string, unknown> | null);
      case 3:
      case 4:
      case 8:
        if (!c.session) return c.socket.close(4003, 'Not authenticated.');
        return;
      default:
        return c.socket.close(4001, 'Unknown opcode.');
    }
  }

  private refuse(c: Connection, entry: Omit<GatewayLogEntry, 'closedWith' | 'at'>, code: number, reason: string): void {
    this.log.push({ ...entry, closedWith: code, at: Date.now() });
    c.socket.close(code, reason);
  }

  private identify(c: Connection, d: Record<string, unknown> | null): void {
    if (!d || typeof d.token !== 'string' || typeof d.intents !== 'number' || typeof d.properties !== 'object') return c.socket.close(4002, 'Error while decoding payload.');
    const token = d.token.replace(/^Bot /, '');
    const bot = this.world.botsByToken.get(token);
    const entry = { op: 'identify' as const, token, botId: bot?.id ?? null };
    if (c.session) return this.refuse(c, entry, 4005, 'Already authenticated.');
    if (!bot) return this.refuse(c, entry, 4004, 'Authentication failed.');
    const intents = d.intents;
    if (!Number.isInteger(intents) || intents < 0 || (intents & ~DEFINED_INTENTS) !== 0) return this.refuse(c, entry, 4013, 'Invalid intent(s).');
    const privileged = (intents & INTENTS.GUILD_PRESENCES) !== 0 || (intents & INTENTS.MESSAGE_CONTENT) !== 0 || ((intents & INTENTS.GUILD_MEMBERS) !== 0 && !bot.guildMembersIntent);
    if (privileged) return this.refuse(c, entry, 4014, 'Disallowed intent(s).');
    const shard = (d.shard as [number, number] | undefined) ?? [0, 1];
    if (!Array.isArray(shard) || !(shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1])) return this.refuse(c, entry, 4010, 'Invalid shard.');
    this.log.push({ ...entry, closedWith: null, at: Date.now() });
    this.identifiesLeft.set(bot.id, (this.identifiesLeft.get(bot.id) ?? 1000) - 1);
    const session: Session = { id: randomBytes(16).toString('hex'), bot, intents, shard, seq: 0, sent: [], socket: c.socket };
    this.sessions.set(session.id, session);
    c.session = session;
    const guilds = [...this.world.guilds.values()].filter((g) => g.members.has(bot.id) && this.inShard(session, g));
    this.dispatch(session, 'READY', {
      v: 10,
      user: { ...this.world.userJson(bot.id), verified: true, mfa_enabled: false },
      guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.url.replace(/\/gateway$/, '/gateway-resume'),
      shard,
      application: { id: bot.id, flags: 0 },
    });
    if ((intents & INTENTS.GUILDS) === 0) return;
    const largeThreshold = typeof d.large_threshold === 'number' ? d.large_threshold : 50;
    for (const guild of guilds) this.dispatch(session, 'GUILD_CREATE', this.guildCreate(guild, bot, largeThreshold));
  }

  private resume(c: Connection, d: Record<string, unknown> | null): void {
    if (!d || typeof d.token !== 'string' || typeof d.session_id !== 'string' || typeof d.seq !== 'number') return c.socket.close(4002, 'Error while decoding payload.');
    const token = d.token.replace(/^Bot /, '');
    const bot = this.world.botsByToken.get(token);
    const entry = { op: 'resume' as const, token, botId: bot?.id ?? null };
    if (c.session) return this.refuse(c, entry, 4005, 'Already authenticated.');
    if (!bot) return this.refuse(c, entry, 4004, 'Authentication failed.');
    const session = this.sessions.get(d.session_id);
    if (!session || session.bot !== bot) {
      this.log.push({ ...entry, closedWith: null, at: Date.now() });
      return this.send(c, { op: 9, d: false });
    }
    if (d.seq > session.seq) return this.refuse(c, entry, 4007, 'Invalid seq.');
    if (session.sent.length > 0 && session.sent[0]!.s > d.seq + 1) {
      this.log.push({ ...entry, closedWith: null, at: Date.now() });
      return this.send(c, { op: 9, d: false });
    }
    this.log.push({ ...entry, closedWith: null, at: Date.now() });
    session.socket?.close(4000, 'Session resumed elsewhere');
    session.socket = c.socket;
    c.session = session;
    for (const event of session.sent) if (event.s > d.seq) this.send(c, { op: 0, ...event });
    this.dispatch(session, 'RESUMED', null);
  }

  private memberChanged({ kind, guild, userId }: MemberChange): void {
    const member = guild.members.get(userId);
    const user = this.world.userJson(userId);
    const data =
      kind === 'remove' || !member
        ? { guild_id: guild.id, user }
        : { ...this.world.memberJson(userId, member), guild_id: guild.id };
    const type = kind === 'add' ? 'GUILD_MEMBER_ADD' : kind === 'update' ? 'GUILD_MEMBER_UPDATE' : 'GUILD_MEMBER_REMOVE';
    for (const session of this.sessions.values()) {
      if ((session.intents & INTENTS.GUILD_MEMBERS) === 0 || !guild.members.has(session.bot.id) || !this.inShard(session, guild)) continue;
      this.dispatch(session, type, data);
    }
  }

  private inShard(session: Session, guild: Guild): boolean {
    return Number((BigInt(guild.id) >> 22n) % BigInt(session.shard[1])) === session.shard[0];
  }

  private guildCreate(guild: Guild, bot: Bot, largeThreshold: number) {
    const large = guild.members.size > largeThreshold;
    const members = [...guild.members].filter(([id]) => !large || id === bot.id).map(([id, m]) => this.world.memberJson(id, m));
    return {
      ...this.world.guildJson(guild, false),
      joined_at: new Date(guild.members.get(bot.id)!.joinedAt).toISOString(),
      large,
      unavailable: false,
      member_count: guild.members.size,
      voice_states: [],
      members,
      channels: [],
      threads: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  /** A dispatch (op 0) in the session's sequence, kept for a resume; sent now if it is connected. */
  private dispatch(session: Session, t: string, d: unknown): void {
    const event = { s: ++session.seq, t, d };
    session.sent.push(event);
    // A resume from further back than this is refused (op 9), as Discord does past its own buffer.
    if (session.sent.length > 10_000) session.sent.shift();
    const c = [...this.connections].find((x) => x.socket === session.socket);
    if (c) this.send(c, { op: 0, ...event });
  }

  private send(c: Connection, payload: { op: number; d?: unknown; s?: number; t?: string }): void {
    if (c.socket.readyState !== WebSocket.OPEN) return;
    c.socket.send(JSON.stringify({ op: payload.op, d: payload.d ?? null, s: payload.s ?? null, t: payload.t ?? null }));
  }
}
