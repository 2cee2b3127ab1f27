import type { Worker } from 'node:worker_threads';

/**
 * Asks a bench worker thread something: posts `message` (none when empty) and resolves with the
 * `key` field of the first reply that has one.
 */
export function askThread<T>(thread: Worker, message: string, key: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (key in m) {
        thread.off('message', on);
        resolve(m[key] as T);
      }
    };
    thread.on('message', on);
    if (message) thread.postMessage(message);
  });
}
