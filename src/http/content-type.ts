import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from '../domain/errors.js';

/**
 * JSON is the only request media type (the original API: "Bodies are JSON"); anything else is a 415.
 * An empty body with a JSON content type is treated as no body (many clients send the header on
 * every request), and `__proto__` / `constructor.prototype` keys are refused.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new AppError('BAD_REQUEST', 'Malformed JSON in request body'), undefined);
    }
  });
}
