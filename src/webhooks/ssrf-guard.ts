import { Resolver as DnsResolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard (docs/configuration.md, TENURE_WEBHOOK_ALLOW_PRIVATE). A webhook
 * URL names a host that tenure will POST to from inside its own network, so unless private
 * targets are allowed every address it resolves to must be public: not loopback, private,
 * link-local, CGNAT, multicast, unspecified, reserved, or a cloud metadata address. Names are
 * resolved at creation and again before every send, and the connection then goes to the address
 * that was checked (src/webhooks/http-sender.ts pins it), so DNS cannot change the answer
 * between check and connect. Unless private targets are allowed, only ports 80, 443 and 1024 and
 * above are taken (src/domain/webhooks/webhooks.service.ts), and no message names the address a
 * name resolved to: the delivery log must not map the network tenure runs in.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to; rejects when it does not resolve. Injected in tests. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** One try's wait for a DNS server, and the tries: a name that does not answer costs at most ~4 s. */
export const DNS_TIMEOUT_MS = 2_000;
export const DNS_TRIES = 2;

const dns = new DnsResolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });

/**
 * Asks the system's DNS servers (/etc/resolv.conf) through c-ares, which runs on the event loop
 * with a real timeout, not `dns.lookup`, whose getaddrinfo calls hold one of libuv's 4 threads for
 * as long as a slow server takes: a tenant's slow authoritative DNS could stall every other
 * lookup (and file system call) of the process. A and AAAA are asked together; the hosts file is
 * not read (`localhost` names are refused before any lookup, RFC 6761).
 */
export const systemResolver: Resolver = async (hostname) => {
  const [v4, v6] = await Promise.allSettled([dns.resolve4(hostname), dns.resolve6(hostname)]);
  const addresses: ResolvedAddress[] = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
  if (addresses.length === 0) throw v4.status === 'rejected' ? v4.reason : (v6 as PromiseRejectedResult).reason;
  return addresses;
};

/** `localhost` and its subdomains: loopback by definition (RFC 6761 §6.3), whatever DNS says. */
export const isLocalhostName = (host: string): boolean => /(^|\.)localhost\.?$/i.test(host);

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT (also Alibaba's metadata 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (AWS, GCP, Azure metadata 169.254.169.254; ECS 169.254.170.2)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (Oracle metadata 192.0.0.192)
  ['192.168.0.0', 16], // private
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast 255.255.255.255
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible block
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: embeds an obfuscated IPv4 address
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local (private; AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (which `isIP` has accepted), zone id dropped. */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    tail.push(...v4[1]!.split('.').map(Number));
    text = text.slice(0, -v4[1]!.length) + '0:0';
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '') : []);
  const left = groups(head);
  const right = groups(rest);
  const middle = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  const words = [...left, ...middle, ...right].map((g) => parseInt(g, 16));
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** An IPv4 address carried inside an IPv6 one (mapped, translated, NAT64 or 6to4), else null. */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16).join('.'); // ::ffff:a.b.c.d
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return b.slice(12, 16).join('.'); // ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return b.slice(12, 16).join('.'); // 64:ff9b::/96
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.'); // 2002::/16 (6to4)
  return null;
}

/** True when tenure must not connect to `address` unless private targets are allowed. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== null) return forbidden.check(v4, 'ipv4');
  return forbidden.check(address.split('%')[0]!, 'ipv6');
}

export type Destination =
  | { ok: true; url: URL; address: string; family: 4 | 6 }
  | { ok: false; errorClass: 'dns' | 'blocked_address'; message: string };

/** How long a name may take to resolve before the attempt (or the check) gives up on it. */
export const RESOLVE_TIMEOUT_MS = 5_000;

async function resolveWithTimeout(resolve: Resolver, hostname: string): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`resolving ${hostname} took longer than ${RESOLVE_TIMEOUT_MS} ms`)), RESOLVE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves a webhook URL's host and checks every address. A literal IP is checked as is. When a
 * name resolves to several addresses and any of them is forbidden, the whole name is refused: a
 * receiver has no reason to publish a private address next to its public ones.
 */
export async function resolveDestination(
  rawUrl: string,
  options: { allowPrivate: boolean; resolve: Resolver },
): Promise<Destination> {
  const url = new URL(rawUrl);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: ResolvedAddress[];
  if (!options.allowPrivate && isLocalhostName(host)) {
    return { ok: false, errorClass: 'blocked_address', message: `${host} is a loopback name` };
  }
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolveWithTimeout(options.resolve, host);
    } catch (err) {
      return { ok: false, errorClass: 'dns', message: `${host} does not resolve (${(err as { code?: string }).code ?? (err as Error).message})` };
    }
    if (addresses.length === 0) return { ok: false, errorClass: 'dns', message: `${host} does not resolve` };
  }
  if (!options.allowPrivate) {
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) {
      // The address a name resolved to is never shown: that would map the network tenure runs in.
      return {
        ok: false,
        errorClass: 'blocked_address',
        message: `${host} ${host === bad.address ? 'is' : 'resolves to'} a loopback, private, link-local or otherwise reserved address`,
      };
    }
  }
  const first = addresses[0]!;
  return { ok: true, url, address: first.address, family: first.family };
}
