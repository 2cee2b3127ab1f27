import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, trustProxy } from './trust-proxy.js';

/** A request from `socket` carrying `forwarded` as X-Forwarded-For. */
const request = (socket: string, forwarded?: string) =>
  ({ socket: { remoteAddress: socket }, connection: { remoteAddress: socket }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('the client behind trusted proxies', () => {
  // The client wrote 9.9.9.9 itself; the load balancer (10.0.0.1) saw 198.51.100.7 and appended it.
  const viaOne = request('10.0.0.1', '9.9.9.9, 198.51.100.7');
  // Two proxies: an edge (10.0.0.2) in front of the load balancer (10.0.0.1).
  const viaTwo = request('10.0.0.1', '9.9.9.9, 198.51.100.7, 10.0.0.2');

  it.each([
    ['nobody trusted: the socket', false, viaOne, '10.0.0.1'],
    ['one hop: what the proxy saw, never the leftmost', 1, viaOne, '198.51.100.7'],
    ['two hops behind two proxies', 2, viaTwo, '198.51.100.7'],
    ['more hops than proxies: as far as the header goes', 5, viaOne, '9.9.9.9'],
    ['a range holding the proxy', ['10.0.0.0/8'], viaOne, '198.51.100.7'],
    ['a range holding both proxies', ['10.0.0.0/8'], viaTwo, '198.51.100.7'],
    ['a single proxy address', ['10.0.0.1'], viaTwo, '10.0.0.2'],
    ['a proxy not listed: the socket', ['192.168.0.0/16'], viaOne, '10.0.0.1'],
    ['no header: the socket', 1, request('10.0.0.1'), '10.0.0.1'],
  ] as const)('%s', (_what, setting, req, client) => {
    expect(clientAddress(req, trustProxy(setting))).toBe(client);
  });
});
