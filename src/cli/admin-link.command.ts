import type { Command } from 'commander';
import type { Container } from '../container.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';

/**
 * `npx tenure admin link --project ID [--user USER_ID]` (docs/dashboard.md, "Signing in"): a
 * one-time sign-in link to the project's dashboard, built on TENURE_PUBLIC_URL. Without `--user`
 * it signs in the project's owner (every permission); with it, that admin of the project. The link
 * works once, for 15 minutes; the database keeps only its digest, so it is shown only here.
 */

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

const HELP = `
Prints {url, expires_at, user_id} on stdout. Open "url" in a browser within 15 minutes and press
Sign in: the link works once, and tenure keeps only its hash. Without --user the link signs in the
project's owner, who may do everything; with --user, that admin of the project (add admins with
POST /v2/projects/{project_id}/admins), with their permissions.
${examples('npx tenure admin link --project <project-id>', 'npx tenure admin link --project <project-id> --user 123456789012345678')}`;

export interface AdminCommandContext {
  withContainer<T>(fn: (container: Container) => Promise<T>): Promise<T>;
  print(value: unknown): void;
  stderr: { write(text: string): unknown };
}

/** Adds `admin link` to the program (so it inherits the program's settings: exit override, output). */
export function addAdminCommand(program: Command, { withContainer, print, stderr }: AdminCommandContext): void {
  const admin = program.command('admin').description("Sign in to a project's dashboard");
  admin
    .command('link')
    .description('Print a one-time sign-in link to the dashboard (15 minutes)')
    .requiredOption('--project <id>', 'the project id')
    .option('--user <user_id>', 'an admin of the project to sign in as (default: the owner)')
    .addHelpText('after', HELP)
    .action(async (opts: { project: string; user?: string }) => {
      if (!isUuid(opts.project)) throw new AppError('NOT_FOUND', `Project ${opts.project} not found`);
      if (opts.user !== undefined && !/^[0-9]{1,20}$/.test(opts.user)) throw new AppError('VALIDATION_ERROR', `--user must be a user id (digits), got "${opts.user}"`);
      const link = await withContainer(async ({ services }) => services.dashboardSessions.createLink(opts.project.toLowerCase(), opts.user ?? null));
      if (!link.ok) throw link.error;
      print({ url: link.value.url, expires_at: link.value.expiresAt.toISOString(), user_id: opts.user ?? null });
      stderr.write(`Open the link within 15 minutes; it works once${opts.user ? ` and signs in admin ${opts.user}` : ' and signs in the owner'}.\n`);
    });
}
