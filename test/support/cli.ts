import { runCli, type CliIo, type CliWriter } from '../../src/cli/program.js';
import type { Harness } from './harness.js';

/**
 * The operator CLI in-process: `runCli` (src/cli/program.ts) as `npx tenure` runs it, its
 * stdout and stderr collected. A spawned `node dist/cli/main.js` costs some 5 CPU-seconds (Node
 * starting, the module graph loading, the embedded data directory opening); the commands'
 * behaviour is proven here, and test/cli keeps a few real processes to prove the bin itself.
 */

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A collector standing for a stream that is not a terminal (a pipe, as in CI). */
class Collected implements CliWriter {
  text = '';
  write(text: string): boolean {
    this.text += text;
    return true;
  }
}

/** Runs `tenure <args>` with `io` (its environment, how it opens its container). */
export async function cli(args: string[], io: Omit<CliIo, 'stdout' | 'stderr'> = {}): Promise<CliResult> {
  const stdout = new Collected();
  const stderr = new Collected();
  const code = await runCli(['node', 'tenure', ...args], { ...io, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * `tenure` on a harness's database: commands run on the harness's open container, which they
 * lend and do not close. `env` is the configuration the commands read (nothing opens its storage).
 */
export function cliOn(harness: Harness, env: NodeJS.ProcessEnv = {}): (...args: string[]) => Promise<CliResult> {
  const io: CliIo = {
    env: { LOG_LEVEL: 'silent', ...env },
    openContainer: async () => ({ container: harness.container, release: async () => undefined }),
  };
  return (...args) => cli(args, io);
}
