import type { MembershipsStore } from '../../store/memberships.store.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { parseFutureInstant } from '../instant.js';
import type { MembershipView } from './membership.view.js';

export interface EndDateSet {
  total: number;
  newEndDate: Date;
}

const err = <T>(e: AppError): Result<T> => ({ ok: false, error: e });

/** The rules of memberships; every change writes its outbox event in the store's same statement. */
export class MembershipsService {
  constructor(
    private readonly store: MembershipsStore,
    private readonly clock: Clock,
  ) {}

  /** Spec 4.1: sets one user's end date (reactivating an expired membership). */
  async extendOne(projectId: string, userId: string, extend: unknown): Promise<Result<EndDateSet>> {
    const endDate = parseFutureInstant(extend, this.clock.now(), 'extend');
    if (endDate instanceof AppError) return err(endDate);
    const extended = await this.store.extendOne(projectId, userId, endDate);
    if (!extended) return fail('NOT_FOUND', `Membership not found for user ${userId}`);
    return ok({ total: 1, newEndDate: endDate });
  }

  /** Spec 4.2: sets the end date of every membership of the project; `total` is how many. */
  async extendAll(projectId: string, extend: unknown): Promise<Result<EndDateSet>> {
    const endDate = parseFutureInstant(extend, this.clock.now(), 'extend');
    if (endDate instanceof AppError) return err(endDate);
    const total = await this.store.extendAll(projectId, endDate);
    return ok({ total, newEndDate: endDate });
  }

  async create(
    projectId: string,
    input: {
      user_id: string;
      end_date: unknown;
      plan_id?: string | null;
      user_name?: { first_name?: string | null; username?: string | null } | null;
    },
  ): Promise<Result<MembershipView>> {
    const endDate = parseFutureInstant(input.end_date, this.clock.now(), 'end_date');
    if (endDate instanceof AppError) return err(endDate);
    const planId = input.plan_id ?? null;
    if (planId && !(await this.store.planExists(projectId, planId))) return fail('NOT_FOUND', 'Plan not found');
    const created = await this.store.create(projectId, {
      userId: input.user_id,
      endDate,
      planId,
      ...(input.user_name ? { userName: input.user_name } : {}),
    });
    // reference.md "Users and bans": a banned user can get no new membership.
    if (created === 'banned') return fail('CONFLICT', `User ${input.user_id} is banned from this project`);
    if (created === 'exists') return fail('CONFLICT', `User ${input.user_id} already has a membership in this project`);
    return ok(created);
  }

  async get(projectId: string, membershipId: string): Promise<Result<MembershipView>> {
    const found = await this.store.get(projectId, membershipId);
    return found ? ok(found) : fail('NOT_FOUND', 'Membership not found');
  }

  list(projectId: string, filter: { userId?: string; limit: number; offset: number }) {
    return this.store.list(projectId, filter);
  }

  async delete(projectId: string, membershipId: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, membershipId)) ? ok(null) : fail('NOT_FOUND', 'Membership not found');
  }
}
