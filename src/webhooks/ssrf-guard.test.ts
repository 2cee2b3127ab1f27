import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, resolveDestination, type Resolver } from './ssrf-guard.js';

const mapped = (table: Record<string, string[]>): Resolver => async (host) => {
  const addresses = table[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('SSRF guard: addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata (AWS, GCP, Azure)'],
    ['169.254.170.2', 'metadata (ECS)'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.100.100.200', 'metadata (Alibaba)'],
    ['192.0.0.192', 'metadata (Oracle)'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['0:0:0:0:0:0:0:1', 'IPv6 loopback, long form'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with a zone'],
    ['fc00::1', 'IPv6 unique local'],
    ['fd00:ec2::254', 'metadata (AWS IPv6)'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:a9fe:a9fe::', '6to4 of metadata'],
    ['2001:0:4136:e378::1', 'Teredo'],
    ['not an address', 'not an address at all'],
  ])('refuses %s (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '93.184.215.14',
    '1.1.1.1',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('SSRF guard: destinations', () => {
  const resolve = mapped({
    'hooks.example.com': ['93.184.215.14'],
    'loopback.example': ['127.0.0.1'],
    'mixed.example': ['93.184.215.14', '10.0.0.7'],
    'v6.example': ['2606:4700:4700::1111'],
    'empty.example': [],
  });
  const strict = { allowPrivate: false, resolve };
  const open = { allowPrivate: true, resolve };

  it('resolves a public name to the address the connection will be pinned to', async () => {
    expect(await resolveDestination('https://hooks.example.com/in', strict)).toMatchObject({ ok: true, address: '93.184.215.14', family: 4 });
    expect(await resolveDestination('https://v6.example/in', strict)).toMatchObject({ ok: true, address: '2606:4700:4700::1111', family: 6 });
  });

  it.each([
    ['https://127.0.0.1/hook', '127.0.0.1 is a loopback'],
    ['https://[::1]/hook', '::1 is a loopback'],
    ['https://10.1.2.3/hook', '10.1.2.3 is a loopback'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is a loopback'],
    ['https://2130706433/hook', '127.0.0.1 is a loopback'],
    ['https://0x7f.1/hook', '127.0.0.1 is a loopback'],
    ['https://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1 is a loopback'],
    ['https://[::ffff:0:7f00:1]/hook', '::ffff:0:7f00:1 is a loopback'],
    ['https://192.0.2.1/hook', '192.0.2.1 is a loopback'],
    ['https://198.51.100.7/hook', '198.51.100.7 is a loopback'],
    ['https://203.0.113.9/hook', '203.0.113.9 is a loopback'],
    ['https://[2001:db8::1]/hook', '2001:db8::1 is a loopback'],
    ['https://[3fff::1]/hook', '3fff::1 is a loopback'],
    ['https://localhost/hook', 'localhost is a loopback name'],
    ['https://a.b.localhost/hook', 'a.b.localhost is a loopback name'],
    ['https://loopback.example/hook', 'loopback.example resolves to a loopback'],
    ['https://mixed.example/hook', 'mixed.example resolves to a loopback'],
  ])('refuses %s', async (url, message) => {
    const result = await resolveDestination(url, strict);
    expect(result).toMatchObject({ ok: false, errorClass: 'blocked_address' });
    expect(result.ok ? '' : result.message).toContain(message);
  });

  it('lets private addresses through when TENURE_WEBHOOK_ALLOW_PRIVATE is on', async () => {
    expect(await resolveDestination('http://127.0.0.1:8080/hook', open)).toMatchObject({ ok: true, address: '127.0.0.1' });
    expect(await resolveDestination('http://loopback.example/hook', open)).toMatchObject({ ok: true, address: '127.0.0.1' });
  });

  it('reports a name that does not resolve as a dns failure', async () => {
    expect(await resolveDestination('https://nowhere.example/hook', strict)).toMatchObject({
      ok: false,
      errorClass: 'dns',
      message: 'nowhere.example does not resolve (ENOTFOUND)',
    });
    expect(await resolveDestination('https://empty.example/hook', strict)).toMatchObject({ ok: false, errorClass: 'dns' });
  });
});
