import { isIPv4, isIPv6 } from 'node:net';

/**
 * What a client address is counted under wherever an address is a rate-limit subject (the REST
 * gate's IP policy and suspension, the live-updates handshake's failure budget and its cap on
 * connections awaiting authentication; docs/rate-limits.md, "Client IP").
 *
 * An IPv4 address counts on its own. An IPv6 client counts by its /64: a subscriber is usually
 * handed a whole /64 (RFC 6177), so per-address counting would give one client 2^64 budgets. An
 * IPv4-mapped address (`::ffff:1.2.3.4`, how a dual-stack socket reports an IPv4 peer) is that
 * IPv4 address, so a client is one subject whichever stack it arrives on. A zone id (`%eth0`)
 * names the local interface, not the client, and is dropped.
 *
 * Keys are canonical (`2001:db8:0:1::/64`): every spelling of addresses in one /64 gives the same
 * key. Anything that is not an IP address (never a socket's) is its own key.
 */
export function clientKey(address: string): string {
  const bare = address.split('%', 1)[0]!;
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return address;
  const groups = hextets(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  // RFC 5952: the four zero groups after the prefix are the longest run, so `::` stands for
  // them, and for any zero groups that end the prefix.
  const prefix = groups.slice(0, 4);
  while (prefix.length > 0 && prefix.at(-1) === 0) prefix.pop();
  return `${prefix.map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function hextets(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  if (tail === undefined) return parse(head);
  const [before, after] = [parse(head), parse(tail)];
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}
