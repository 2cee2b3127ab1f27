/** What a move says it did (docs/moving-in.md, "The report and exit codes"), kept as it goes. */

export const KINDS = ['setting', 'target', 'plan', 'membership', 'user', 'ban'] as const;
export type Kind = (typeof KINDS)[number];

export interface NotBrought {
  kind: Kind | 'plan_target' | 'subscription';
  source_id: string;
  reason: string;
}

export interface MoveInReport {
  /** Written by this run. */
  brought_over: Record<Kind, number>;
  /** Found as an earlier run (or the owner) left them: nothing written. */
  already_there: Record<Kind, number>;
  /** Each object that is not in tenure after the run, and why. */
  not_brought_over: NotBrought[];
  /** Pages and settings read from the source. */
  source_reads: number;
}

const zero = (): Record<Kind, number> => ({ setting: 0, target: 0, plan: 0, membership: 0, user: 0, ban: 0 });

export class Ledger {
  readonly report: MoveInReport = { brought_over: zero(), already_there: zero(), not_brought_over: [], source_reads: 0 };

  /** One object that is not in tenure after the run. */
  refuse(kind: NotBrought['kind'], id: string, reason: string): void {
    this.report.not_brought_over.push({ kind, source_id: id, reason });
  }

  /** One object in tenure: written by this run, or found. */
  count(kind: Kind, written: boolean): void {
    this.report[written ? 'brought_over' : 'already_there'][kind] += 1;
  }
}
