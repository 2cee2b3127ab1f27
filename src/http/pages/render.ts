import type { FastifyReply } from 'fastify';

/** What every page knows: the path prefix of TENURE_PUBLIC_URL, and whether it is https. */
export interface PageContext {
  base: string;
  secure: boolean;
}

export interface Message {
  title: string;
  lines: string[];
  /** `good` (paid), `bad` (a refusal) or neutral. */
  tone?: 'good' | 'bad' | '';
  action?: { href: string; label: string };
}

/** A page of a heading, a few sentences and at most one button; never cached (it reads state). */
export function messagePage(reply: FastifyReply, context: PageContext, status: number, message: Message) {
  return page(reply, context, status, 'message', { tone: message.tone ?? (status >= 400 ? 'bad' : ''), action: null, ...message });
}

export function page(reply: FastifyReply, context: PageContext, status: number, template: string, data: Record<string, unknown>) {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').view(template, { ...data, base: context.base });
}

const DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', hour12: false });

/** `2026-11-28T23:00:00.000Z` → `28 Nov 2026, 23:00 UTC`. */
export function dateOf(iso: string): string {
  return `${DATE.format(new Date(iso))} UTC`;
}
