import { FlexibleRateLimiter, type Charge, type LimitsConfig } from '../../src/ratelimit/rate-limiter.js';

/**
 * The in-memory limiter's own cost per request: all three policies of an authenticated request
 * (ip, key, burst) plus the suspension read, in one `consume`, over many keys and addresses so
 * the maps are realistic. Limits are high so nothing is refused (refusals cost a violation write).
 */
export async function limiterMicroBench(iterations = 300_000): Promise<{ nsPerRequest: number; iterations: number }> {
  const config: LimitsConfig = {
    policies: { key: { limit: 1e9, windowSec: 60 }, ip: { limit: 1e9, windowSec: 60 }, burst: { limit: 1e9, windowSec: 1 }, callback: { limit: 1e9, windowSec: 60 } },
    suspension: { threshold: 10, windowSec: 600, durationSec: 900 },
  };
  const limiter = new FlexibleRateLimiter(config);
  const requests: Charge[][] = Array.from({ length: 1024 }, (_, i) => {
    const key = `key:${i % 500}`;
    const ip = `ip:10.0.${i % 7}.${i % 251}`;
    return [
      { policy: 'ip', subject: ip },
      { policy: 'key', subject: key },
      { policy: 'burst', subject: key },
    ];
  });
  for (let i = 0; i < 20_000; i++) await limiter.consume(requests[i & 1023]!); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await limiter.consume(requests[i & 1023]!);
  const elapsed = Number(process.hrtime.bigint() - started);
  await limiter.close();
  return { nsPerRequest: elapsed / iterations, iterations };
}
