/** Paging of the dashboard's own lists (sessions, audit, admins): `?page=N`, 50 rows a page. */

export const PAGE_SIZE = 50;

/** The page asked for (1 when absent or not a positive number) and its offset. */
export function pageOf(query: unknown): { page: number; limit: number; offset: number } {
  const raw = (query as Record<string, unknown> | undefined)?.page;
  const n = typeof raw === 'string' && /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : 1;
  return { page: n, limit: PAGE_SIZE, offset: (n - 1) * PAGE_SIZE };
}

/** The pager's links: previous and next page, or null at either end. */
export function pagerOf(path: string, page: number, total: number): { prev: string | null; next: string | null; text: string } {
  const last = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return {
    prev: page > 1 ? `${path}?page=${page - 1}` : null,
    next: page < last ? `${path}?page=${page + 1}` : null,
    text: `Page ${Math.min(page, last)} of ${last} (${total.toLocaleString('en-US')} in all)`,
  };
}

const DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', hour12: false });

/** `28 Nov 2026, 23:00 UTC`. */
export function when(d: Date | string): string {
  return `${DATE.format(new Date(d))} UTC`;
}
