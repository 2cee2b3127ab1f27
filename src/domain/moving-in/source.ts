/**
 * What a move from the hosted product reads (docs/moving-in.md): the lists of its v2 API, a page
 * at a time, and its settings. The HTTP side (the key, paging, the rate limits) is behind this
 * port: src/moving-in/botsubscription-api.ts.
 */

/** The lists a move reads, each `GET /v2/projects/{id}/<list>?limit=&offset=`. */
export const SOURCE_LISTS = ['targets', 'plans', 'memberships', 'users'] as const;
export type SourceList = (typeof SOURCE_LISTS)[number];

export interface SourcePage {
  /** The page's objects as the source sent them, checked by the move (move-in-rules.ts). */
  items: unknown[];
  /** How many the whole list holds (the envelope's `total`). */
  total: number;
}

export interface MoveInSource {
  /** Objects a page holds at most (the `limit` sent). */
  readonly pageSize: number;
  page(list: SourceList, offset: number): Promise<SourcePage>;
  settings(): Promise<Record<string, unknown>>;
}

/** The source refused the key, or the key is not one of the source project's: nothing can be read. */
export class SourceAccessError extends Error {}

/** The source could not be read (down, answering errors, or answers that are not its API's). */
export class SourceUnavailableError extends Error {}
