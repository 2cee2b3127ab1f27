import type { AddressInfo } from 'node:net';
import { io as connectSocket, type Socket } from 'socket.io-client';
import { createHarness, type Harness, type Tenant } from '../support/harness.js';
import { LIVE_NAMESPACE, LIVE_PATH, startLiveUpdates, type LiveUpdates } from '../../src/live/live-updates.js';

/**
 * The live-update suites' harness: the real app (createHarness) really listening on 127.0.0.1
 * port 0, with the live-updates gateway attached to its HTTP server as `startServer` attaches
 * it, and real socket.io-client connections, on the harness's own database.
 */

export interface LiveHarness {
  h: Harness;
  live: LiveUpdates;
  url: string;
  tenant(): Promise<Tenant>;
  /** A client connected (or refused) with `auth`; closed by `close()`. */
  client(auth: Record<string, unknown> | undefined, options?: ClientOptions): LiveClient;
  /** A connected tenant client (waits for `ready`). */
  connect(t: Tenant): Promise<LiveClient>;
  close(): Promise<void>;
}

export interface ClientOptions {
  transports?: ('websocket' | 'polling')[];
  /** Sent with every HTTP request of the connection (e.g. X-Forwarded-For, behind TRUST_PROXY). */
  headers?: Record<string, string>;
}

export interface LiveHarnessOptions {
  env?: Record<string, string>;
  /** An existing harness (e.g. the webhook harness's) to attach to. */
  harness?: { h: Harness; tenant(): Promise<Tenant> };
  keyCheckMs?: number;
}

export async function createLiveHarness(o: LiveHarnessOptions = {}): Promise<LiveHarness> {
  const h = o.harness?.h ?? (await createHarness({ env: o.env }));
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const live = await startLiveUpdates(h.app.server, h.container, { keyCheckMs: o.keyCheckMs });
  const clients: LiveClient[] = [];
  const tenant = () => (o.harness ? o.harness.tenant() : h.tenant());
  const client = (auth: Record<string, unknown> | undefined, options?: ClientOptions) => {
    const c = new LiveClient(url, auth, options?.transports ?? ['websocket'], options?.headers);
    clients.push(c);
    return c;
  };
  return {
    h,
    live,
    url,
    tenant,
    client,
    async connect(t) {
      const c = client({ token: t.key, project_id: t.projectId });
      await c.ready();
      return c;
    },
    async close() {
      for (const c of clients) c.socket.disconnect();
      await live.close();
      await h.close();
    },
  };
}

export interface Received {
  event: string;
  payload: Record<string, unknown>;
}

/** A socket.io-client connection that records everything the server sends it, in order. */
export class LiveClient {
  readonly socket: Socket;
  readonly received: Received[] = [];
  connectError: (Error & { data?: { error_code?: string } }) | null = null;
  private waiters: (() => void)[] = [];

  constructor(url: string, auth: Record<string, unknown> | undefined, transports: ('websocket' | 'polling')[], headers?: Record<string, string>) {
    this.socket = connectSocket(`${url}${LIVE_NAMESPACE}`, {
      path: LIVE_PATH,
      transports,
      ...(auth ? { auth } : {}),
      ...(headers ? { extraHeaders: headers } : {}),
      reconnection: false,
      forceNew: true,
    });
    this.socket.onAny((event: string, payload: Record<string, unknown>) => {
      this.received.push({ event, payload });
      this.notify();
    });
    this.socket.on('connect_error', (err) => {
      this.connectError = err;
      this.notify();
    });
    for (const event of ['disconnect', 'connect'] as const) this.socket.on(event, () => this.notify());
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits (bounded) until `predicate` holds. */
  async until<T>(predicate: () => T | undefined | false, what: string, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = predicate();
      if (value) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(this.received)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** System messages (the `message` event). */
  messages(): Record<string, unknown>[] {
    return this.received.filter((r) => r.event === 'message').map((r) => r.payload);
  }

  /** Broadcasts (every event but `message`). */
  events(): Received[] {
    return this.received.filter((r) => r.event !== 'message');
  }

  /** The next system message of `type` after the first `skip` of that type. */
  message(type: string, nth = 0, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.until(() => this.messages().filter((m) => m.type === type)[nth], `message ${type} #${nth}`, timeoutMs);
  }

  async ready(): Promise<string> {
    const ready = await this.message('ready');
    return ready.connection_id as string;
  }

  /** The refusal of a handshake. */
  async refusal(): Promise<{ message: string; error_code: string | undefined }> {
    await this.until(() => this.connectError ?? this.socket.connected, 'connect_error');
    if (!this.connectError) throw new Error(`connected, but a refusal was expected; received: ${JSON.stringify(this.received)}`);
    return { message: this.connectError.message, error_code: this.connectError.data?.error_code };
  }

  send(payload: unknown): void {
    this.socket.emit('message', payload);
  }

  /** Sends an action and waits for its answer (the next message of `type` not yet seen). */
  async act(payload: unknown, type: string): Promise<Record<string, unknown>> {
    const seen = this.messages().filter((m) => m.type === type).length;
    this.send(payload);
    return this.message(type, seen);
  }

  disconnected(): Promise<boolean> {
    return this.until(() => this.socket.disconnected, 'disconnect');
  }
}
