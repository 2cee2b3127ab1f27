import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The seam for rate limits (spec 8, DESIGN.md check order): the API's hooks call `byIp` before
 * authentication and `byKey` right after it. A limiter sets its headers on `reply` and throws an
 * AppError (429) to refuse. `noLimits` is the do-nothing twin.
 */
export interface RequestLimiter {
  byIp(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  byKey(keyId: string, request: FastifyRequest, reply: FastifyReply): Promise<void>;
  close(): Promise<void>;
}

export const noLimits: RequestLimiter = {
  byIp: async () => undefined,
  byKey: async () => undefined,
  close: async () => undefined,
};
