import type { Result } from '../domain/errors.js';

/** A handler's way from a service Result to a reply: failures go to the one error handler. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}
