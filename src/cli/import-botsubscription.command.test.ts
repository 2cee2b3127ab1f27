import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { optionsProblem, promptHidden } from './import-botsubscription.command.js';
import { MoveInProgressPrinter } from './move-in-progress.js';

/** A terminal's stdin: a stream with raw mode, which the prompt turns on and off. */
function terminal() {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    modes: [] as boolean[],
    setRawMode(on: boolean) {
      stdin.modes.push(on);
      return stdin;
    },
  });
  return stdin;
}

describe('import botsubscription', () => {
  it('asks for the key without echoing it, taking backspace, and leaves raw mode', async () => {
    const stdin = terminal();
    let shown = '';
    const answer = promptHidden('Key: ', stdin as unknown as NodeJS.ReadStream, { write: (t: string) => (shown += t) });
    stdin.write('bs_sec');
    stdin.write('x\u007fret\r');
    expect(await answer).toBe('bs_secret');
    expect(shown).toBe('Key: \n');
    expect(stdin.modes).toEqual([true, false]);
  });

  it('refuses options it cannot use, naming the option', () => {
    const ok = { project: '6f1c0d2e-0000-4000-8000-000000000000', sourceProject: 'abc-123', baseUrl: 'https://api.botsubscription.com', retries: '5' };
    expect(optionsProblem(ok)).toBeNull();
    expect(optionsProblem({ ...ok, project: 'acme' })).toMatch(/^--project/);
    expect(optionsProblem({ ...ok, sourceProject: '../x' })).toMatch(/^--source-project/);
    expect(optionsProblem({ ...ok, baseUrl: 'ftp://x' })).toMatch(/^--base-url must be an https URL/);
    expect(optionsProblem({ ...ok, baseUrl: 'http://api.botsubscription.com' })).toMatch(/^--base-url must be an https URL/);
    expect(optionsProblem({ ...ok, baseUrl: 'http://127.0.0.1:8080' })).toBeNull();
    expect(optionsProblem({ ...ok, baseUrl: 'https://user:pw@x' })).toMatch(/credentials/);
    expect(optionsProblem({ ...ok, retries: '11' })).toMatch(/^--retries/);
  });

  it('estimates what is left at the pace so far, never faster than the limit allows', () => {
    const clock = { t: 0 };
    const printer = new MoveInProgressPrinter({ sink: { write: () => true }, inPlace: false, perMinute: 100, rateLimited: () => 1, now: () => clock.t });
    clock.t = 10_000;
    // 10 reads in 10 s: 1 s a read, slower than the limit's 0.6 s: 90 left take 90 s.
    expect(printer.line({ step: 'memberships', reads: 10, readsTotal: 100 })).toBe('import botsubscription: memberships, 10 of 100 reads, 1 waited out (429), ETA 1m30s');
    // 50 reads in 10 s would be faster than 100 a minute: the limit's pace, 0.6 s a read, is used.
    expect(printer.line({ step: 'users', reads: 50, readsTotal: 100 })).toBe('import botsubscription: users, 50 of 100 reads, 1 waited out (429), ETA 30s');
  });
});
