import { timestamp } from 'drizzle-orm/pg-core';

/** Every instant is a `timestamptz` with millisecond precision, read as a Date. */
export const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });
