import { describe, expect, it } from 'vitest';
import { StripeClients } from './stripe-clients.js';

describe('StripeClients', () => {
  it('builds one client per key and hands the same one back', () => {
    let built = 0;
    const clients = new StripeClients((key: string) => ({ key, n: ++built }));
    const a = clients.get('sk_test_a');
    expect(clients.get('sk_test_a')).toBe(a);
    expect(clients.get('sk_test_b')).not.toBe(a);
    expect(built).toBe(2);
  });

  it('keeps at most `max`, dropping the least recently used', () => {
    let built = 0;
    const clients = new StripeClients((key: string) => ({ key, n: ++built }), 2);
    const a = clients.get('a');
    clients.get('b');
    clients.get('a'); // a is now the most recent
    clients.get('c'); // drops b
    expect(clients.size).toBe(2);
    expect(clients.get('a')).toBe(a);
    expect(built).toBe(3);
    clients.get('b'); // built again
    expect(built).toBe(4);
  });

  it('gives a new key a new client (a key rotated by connecting the account again)', () => {
    const clients = new StripeClients((key: string) => ({ key }));
    expect(clients.get('sk_test_old').key).toBe('sk_test_old');
    expect(clients.get('sk_test_new').key).toBe('sk_test_new');
  });
});
