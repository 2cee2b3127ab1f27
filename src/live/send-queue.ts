import type { Socket } from 'socket.io';

/**
 * The bound on what one live-update connection may have waiting to be written (docs/memory.md,
 * "Bounds"). Engine.IO queues every packet a transport cannot take yet (a WebSocket still writing
 * its previous batch, a long-polling client that has not polled again) with no limit of its own, so
 * a client that reads slower than events are broadcast would grow the process for as long as it
 * stays connected. Past this many bytes waiting, the connection is closed and its queue dropped;
 * the client reconnects and resumes from the last event it received (`after`, at least once).
 *
 * 1 MiB holds the broadcaster's largest burst (500 events a claim, each well under 1 KB) twice over,
 * so a client that keeps up is never cut; with the batch being written besides, a connection holds
 * at most about twice this.
 */
export const SEND_QUEUE_BYTES = 1024 * 1024;

type Connection = Socket['conn'];

/** Bytes of an Engine.IO packet's data: a string (UTF-8 as sent) or binary. */
function sizeOf(data: unknown): number {
  if (typeof data === 'string') return Buffer.byteLength(data);
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

/**
 * Closes `conn` (dropping what it queued) once more than `maxBytes` wait in its send queue;
 * `onOverflow` is told how many. What is counted: packets created since the last flush to the
 * transport (Engine.IO's writeBuffer).
 */
export function boundSendQueue(conn: Connection, maxBytes = SEND_QUEUE_BYTES, onOverflow: (queuedBytes: number) => void = () => undefined): void {
  let queued = 0;
  conn.on('flush', () => void (queued = 0));
  conn.on('packetCreate', (packet: { data?: unknown }) => {
    queued += sizeOf(packet.data);
    if (queued <= maxBytes || conn.readyState !== 'open') return;
    onOverflow(queued);
    // The WebSocket (the `ws` library's, which Engine.IO's transport keeps as `socket`) is cut at
    // once: a closing handshake with a client that does not read would hold the batch being written
    // for ws's 30 s close timeout.
    const ws = (conn.transport as unknown as { socket?: { terminate?: () => void } }).socket;
    // Discarding: not waiting for the queue to drain, which is what the client is not doing.
    conn.close(true);
    ws?.terminate?.();
  });
}
