import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';

/**
 * Who the client is, behind the proxies TRUST_PROXY names (docs/rate-limits.md, "Client IP"): one
 * rule for the REST API (Fastify's `trustProxy`) and the live-updates handshake, so a client is
 * the same address to the rate limits and suspensions of both. Walking `X-Forwarded-For` from the
 * socket back, each trusted hop passes the question to the address before it; the first address
 * not trusted is the client. The leftmost entry, which the client writes itself, is the answer
 * only when every proxy on the way is trusted.
 */

/** Trusts the first `hops` addresses from the socket back, or the addresses and ranges listed. */
export type TrustProxy = (address: string, hop: number) => boolean;

export function trustProxy(setting: false | number | readonly string[]): TrustProxy | false {
  if (setting === false) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyaddr.compile([...setting]);
}

/** The client's address of a request (an HTTP request, or a Socket.IO handshake's). */
export function clientAddress(request: IncomingMessage, trust: TrustProxy | false): string {
  if (trust === false) return request.socket.remoteAddress ?? '';
  return proxyaddr(request, trust);
}
