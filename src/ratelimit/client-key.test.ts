import { describe, expect, it } from 'vitest';
import { clientKey } from './client-key.js';

describe('clientKey', () => {
  it.each([
    ['an IPv4 address, as it is', '203.0.113.7', '203.0.113.7'],
    ['a compressed IPv6 address, by its /64', '2001:db8:1:2::5', '2001:db8:1:2::/64'],
    ['the full form of the same', '2001:0db8:0001:0002:0000:0000:0000:0005', '2001:db8:1:2::/64'],
    ['upper case', '2001:DB8:1:2:AAAA:BBBB:CCCC:DDDD', '2001:db8:1:2::/64'],
    ['zero groups ending the prefix, folded into ::', '2001:db8::1', '2001:db8::/64'],
    ['zero groups inside the prefix, kept', '2001:0:0:1::5', '2001:0:0:1::/64'],
    ['a prefix of zeros (loopback)', '::1', '::/64'],
    ['a zone id, dropped', 'fe80::1%eth0', 'fe80::/64'],
    ['a numeric zone id, dropped', 'fe80::2:3:4:5%12', 'fe80::/64'],
    ['a dotted tail that is not IPv4-mapped (NAT64), by its /64', '64:ff9b::192.0.2.33', '64:ff9b::/64'],
    ['an IPv4-mapped address, as its IPv4 address', '::ffff:198.51.100.7', '198.51.100.7'],
    ['an IPv4-mapped address in hex', '::ffff:c633:6407', '198.51.100.7'],
    ['an IPv4-mapped address in full, upper case', '0:0:0:0:0:FFFF:198.51.100.7', '198.51.100.7'],
    ['something that is not an address, as it is', 'unknown', 'unknown'],
    ['nothing, as it is', '', ''],
  ])('keys %s', (_what, address, key) => {
    expect(clientKey(address)).toBe(key);
  });

  it('gives every address of one /64, however written, the same key', () => {
    const oneSlash64 = [
      '2001:db8:a:b::',
      '2001:db8:a:b::1',
      '2001:0db8:000a:000b:0000:0000:0000:0001',
      '2001:db8:a:b:ffff:ffff:ffff:ffff',
      '2001:db8:a:b:1:2:3:4%wlan0',
      '2001:db8:a:b:0:0:10.1.2.3',
    ];
    expect(new Set(oneSlash64.map(clientKey))).toStrictEqual(new Set(['2001:db8:a:b::/64']));
  });

  it('keeps neighbouring /64s and IPv4 addresses apart', () => {
    const keys = ['2001:db8:a:b::1', '2001:db8:a:c::1', '2001:db8:b:b::1', '10.0.0.1', '10.0.0.2'].map(clientKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('counts an IPv4 client as one subject whichever stack it arrives on', () => {
    expect(clientKey('::ffff:10.0.0.1')).toBe(clientKey('10.0.0.1'));
  });
});
