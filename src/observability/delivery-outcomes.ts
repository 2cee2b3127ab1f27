/**
 * Webhook delivery attempts by outcome, counted for the whole process. The delivery worker is
 * not part of the HTTP app (it runs beside it, or alone in `npx tenure worker`), so it counts
 * here, and every app's metrics registry reads these counts when scraped.
 */

export type DeliveryOutcome = 'delivered' | 'retry' | 'dropped' | 'exhausted';

const counts = new Map<DeliveryOutcome, number>();

export function countDeliveryOutcome(outcome: DeliveryOutcome): void {
  counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
}

export function deliveryOutcomeCounts(): ReadonlyMap<DeliveryOutcome, number> {
  return counts;
}
