import { sql } from 'drizzle-orm';
import type { DiscordLoginStatements, LoginApplication, LoginRecord, MemberToken, NewLogin } from '../domain/web/discord-login.service.js';
import type { TelegramLoginStatements, TelegramLoginTarget } from '../domain/web/telegram-login.service.js';
import type { PlanAccessFacts, PlanReadinessStatements } from '../domain/web/plan-readiness.js';
import { MAX_PUBLIC_PLANS, type PublicProject } from '../domain/web/public-page.js';
import { rowsOf, type Db } from '../database/db.js';
import { at } from '../database/sql.js';

/**
 * Members on the web (docs/web.md; schema in schema/web.ts): what the public plan page shows, and
 * the logins with Discord under way, and the Telegram widget's answers used. Each method is one statement.
 */

const GUILD_OF = sql.raw(`CASE WHEN t.kind = 'guild' THEN t.external_id ELSE g.external_id END`);

/**
 * What decides whether plan `pl` (of project `pl.project_id`) can be bought now (PlanAccessFacts,
 * src/domain/web/plan-readiness.ts): its enabled targets' health, its platforms' bots' health, and
 * whether its latest finished guild join was refused 50013 after its targets and the Discord bot
 * last changed (an owner's fix is a target update or a reconnection, as for an unhealthy target).
 */
const PLAN_ACCESS_FACTS = sql.raw(`json_build_object(
  'targets', (SELECT coalesce(json_agg(json_build_object('platform', t.platform, 'health', t.health)), '[]'::json)
              FROM plan_targets pt JOIN targets t ON t.id = pt.target_id WHERE pt.plan_id = pl.id AND t.is_enabled),
  'bots', json_build_object(
    'discord', (SELECT i.health FROM integrations i WHERE i.project_id = pl.project_id AND i.platform = 'discord'),
    'telegram', (SELECT i.health FROM integrations i WHERE i.project_id = pl.project_id AND i.platform = 'telegram')),
  'inviteRefused', coalesce((
    SELECT j.state = 'failed' AND j.last_error LIKE '50013:%'
      AND j.done_at > coalesce((SELECT max(t.updated_at) FROM plan_targets pt JOIN targets t ON t.id = pt.target_id WHERE pt.plan_id = pl.id), '-infinity')
      AND j.done_at > coalesce((SELECT i.connected_at FROM integrations i WHERE i.project_id = pl.project_id AND i.platform = 'discord'), '-infinity')
    FROM guild_joins j WHERE j.project_id = pl.project_id AND j.plan_id = pl.id AND j.state <> 'pending'
    ORDER BY j.done_at DESC LIMIT 1), false))`);

export class WebStore implements DiscordLoginStatements, TelegramLoginStatements, PlanReadinessStatements {
  constructor(private readonly db: Db) {}

  /**
   * The project, its plans (oldest first, at most MAX_PUBLIC_PLANS) with the enabled targets each
   * grants, whether Login with Discord is set up, the Telegram bot's name and the branding
   * settings; null when there is no such project.
   */
  async publicProject(projectId: string): Promise<PublicProject | null> {
    const result = await this.db.execute(sql`
      SELECT p.id AS "projectId", p.name,
        (SELECT coalesce(json_agg(json_build_object(
            'planId', pl.id, 'name', pl.name, 'priceFormatted', pl.price_formatted, 'duration', pl.duration, 'recurring', pl.recurring,
            'targets', (SELECT coalesce(json_agg(json_build_object('name', t.name, 'kind', t.kind, 'platform', t.platform) ORDER BY pt.created_at, t.id), '[]'::json)
                        FROM plan_targets pt JOIN targets t ON t.id = pt.target_id WHERE pt.plan_id = pl.id AND t.is_enabled),
            'access', ${PLAN_ACCESS_FACTS}
          ) ORDER BY pl.created_at, pl.id), '[]'::json)
         FROM (SELECT * FROM plans WHERE project_id = p.id AND deleted_at IS NULL ORDER BY created_at, id LIMIT ${MAX_PUBLIC_PLANS}) pl) AS plans,
        EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = p.id AND i.platform = 'discord'
                AND i.client_secret_sealed IS NOT NULL AND i.application_id IS NOT NULL) AS "discordLogin",
        (SELECT i.bot_name FROM integrations i WHERE i.project_id = p.id AND i.platform = 'telegram') AS "telegramBot",
        (SELECT s.value FROM settings s WHERE s.project_id = p.id AND s.key = 'page_logo_url') AS "logoSetting",
        (SELECT s.value FROM settings s WHERE s.project_id = p.id AND s.key = 'page_accent_color') AS "accentSetting"
      FROM projects p WHERE p.id = ${projectId}`);
    const row = rowsOf<PublicProject & { plans: PublicProject['plans'] | string }>(result)[0];
    if (!row) return null;
    return { ...row, plans: typeof row.plans === 'string' ? (JSON.parse(row.plans) as PublicProject['plans']) : row.plans };
  }

  async planAccessFacts(projectId: string, planId: string): Promise<PlanAccessFacts | null> {
    const result = await this.db.execute(sql`
      SELECT ${PLAN_ACCESS_FACTS} AS facts FROM plans pl WHERE pl.id = ${planId} AND pl.project_id = ${projectId} AND pl.deleted_at IS NULL`);
    const row = rowsOf<{ facts: PlanAccessFacts | string }>(result)[0];
    if (!row) return null;
    return typeof row.facts === 'string' ? (JSON.parse(row.facts) as PlanAccessFacts) : row.facts;
  }

  async loginTarget(projectId: string, planId: string): Promise<{ application: LoginApplication | null; planGrantsDiscord: boolean }> {
    const result = await this.db.execute(sql`
      SELECT
        EXISTS (SELECT 1 FROM plans pl JOIN plan_targets pt ON pt.plan_id = pl.id JOIN targets t ON t.id = pt.target_id
                WHERE pl.id = ${planId} AND pl.project_id = ${projectId} AND pl.deleted_at IS NULL AND t.platform = 'discord' AND t.is_enabled) AS "planGrantsDiscord",
        i.application_id AS "applicationId", i.client_secret_sealed AS "clientSecretSealed"
      FROM (SELECT 1) one
      LEFT JOIN integrations i ON i.project_id = ${projectId} AND i.platform = 'discord'`);
    const row = rowsOf<{ planGrantsDiscord: boolean; applicationId: string | null; clientSecretSealed: string | null }>(result)[0]!;
    const application = row.applicationId && row.clientSecretSealed ? { applicationId: row.applicationId, clientSecretSealed: row.clientSecretSealed } : null;
    return { application, planGrantsDiscord: row.planGrantsDiscord };
  }

  async portalLoginTarget(projectId: string): Promise<{ application: LoginApplication | null; projectExists: boolean }> {
    const result = await this.db.execute(sql`
      SELECT i.application_id AS "applicationId", i.client_secret_sealed AS "clientSecretSealed"
      FROM projects p LEFT JOIN integrations i ON i.project_id = p.id AND i.platform = 'discord'
      WHERE p.id = ${projectId}`);
    const row = rowsOf<{ applicationId: string | null; clientSecretSealed: string | null }>(result)[0];
    if (!row) return { application: null, projectExists: false };
    const application = row.applicationId && row.clientSecretSealed ? { applicationId: row.applicationId, clientSecretSealed: row.clientSecretSealed } : null;
    return { application, projectExists: true };
  }

  /** Records a login; logins expired an hour ago go with it, so the table holds only logins under way. */
  async saveLogin(l: NewLogin): Promise<void> {
    await this.db.execute(sql`
      WITH swept AS (DELETE FROM web_logins WHERE expires_at < ${at(new Date(l.createdAt.getTime() - 3_600_000))})
      INSERT INTO web_logins (state_hash, project_id, plan_id, user_id, guild_id, code_verifier_sealed, created_at, expires_at)
      VALUES (${l.stateHash}, ${l.projectId}, ${l.planId}, ${l.rejoin?.userId ?? null}, ${l.rejoin?.guildId ?? null}, ${l.codeVerifierSealed}, ${at(l.createdAt)}, ${at(l.expiresAt)})`);
  }

  async rejoinTarget(projectId: string, userId: string, targetId: string): Promise<{ application: LoginApplication | null; guildId: string } | null> {
    const result = await this.db.execute(sql`
      SELECT ${GUILD_OF} AS "guildId", i.application_id AS "applicationId", i.client_secret_sealed AS "clientSecretSealed"
      FROM access a JOIN targets t ON t.id = a.target_id LEFT JOIN targets g ON g.id = t.parent_target_id
      LEFT JOIN integrations i ON i.project_id = a.project_id AND i.platform = 'discord'
      WHERE a.project_id = ${projectId} AND a.user_id = ${userId} AND a.target_id = ${targetId}
        AND a.platform = 'discord' AND a.desired = 'granted' AND a.state = 'waiting_for_member'`);
    const row = rowsOf<{ guildId: string | null; applicationId: string | null; clientSecretSealed: string | null }>(result)[0];
    if (!row?.guildId) return null;
    const application = row.applicationId && row.clientSecretSealed ? { applicationId: row.applicationId, clientSecretSealed: row.clientSecretSealed } : null;
    return { application, guildId: row.guildId };
  }

  async saveRejoin(r: MemberToken & { guildId: string; dedupeKey: string; now: Date }): Promise<void> {
    // The token and the join together: a join is never queued without the token it is made with.
    await this.db.execute(sql`
      WITH token AS (${this.upsertToken(r)} RETURNING 1)
      INSERT INTO guild_joins (project_id, user_id, plan_id, guild_id, dedupe_key, next_attempt_at, created_at)
      SELECT ${r.projectId}, ${r.userId}, NULL, ${r.guildId}, ${r.dedupeKey}, ${at(r.now)}, ${at(r.now)} FROM token
      ON CONFLICT (project_id, dedupe_key) DO NOTHING`);
  }

  async takeLogin(stateHash: string): Promise<LoginRecord | null> {
    const result = await this.db.execute(sql`
      WITH taken AS (DELETE FROM web_logins WHERE state_hash = ${stateHash} RETURNING project_id, plan_id, user_id, guild_id, code_verifier_sealed, expires_at)
      SELECT t.project_id AS "projectId", t.plan_id AS "planId", t.user_id AS "userId", t.guild_id AS "guildId",
             t.code_verifier_sealed AS "codeVerifierSealed", t.expires_at AS "expiresAt",
             i.application_id AS "applicationId", i.client_secret_sealed AS "clientSecretSealed"
      FROM taken t LEFT JOIN integrations i ON i.project_id = t.project_id AND i.platform = 'discord'`);
    const row = rowsOf<
      Omit<LoginRecord, 'application' | 'expiresAt' | 'rejoin'> & { userId: string | null; guildId: string | null; expiresAt: Date | string; applicationId: string | null; clientSecretSealed: string | null }
    >(result)[0];
    if (!row) return null;
    return {
      projectId: row.projectId,
      planId: row.planId,
      rejoin: row.userId !== null && row.guildId !== null ? { userId: row.userId, guildId: row.guildId } : null,
      codeVerifierSealed: row.codeVerifierSealed,
      expiresAt: new Date(row.expiresAt),
      application: row.applicationId && row.clientSecretSealed ? { applicationId: row.applicationId, clientSecretSealed: row.clientSecretSealed } : null,
    };
  }

  async saveMemberToken(t: MemberToken): Promise<void> {
    await this.db.execute(this.upsertToken(t));
  }

  private upsertToken(t: MemberToken) {
    return sql`
      INSERT INTO discord_member_tokens (project_id, user_id, access_token_sealed, refresh_token_sealed, expires_at, updated_at)
      VALUES (${t.projectId}, ${t.userId}, ${t.accessTokenSealed}, ${t.refreshTokenSealed}, ${at(t.expiresAt)}, now())
      ON CONFLICT (project_id, user_id) DO UPDATE SET access_token_sealed = excluded.access_token_sealed,
        refresh_token_sealed = excluded.refresh_token_sealed, expires_at = excluded.expires_at, updated_at = excluded.updated_at`;
  }

  async telegramLoginTarget(projectId: string, planId: string | null): Promise<TelegramLoginTarget | null> {
    const result = await this.db.execute(sql`
      SELECT i.bot_token_sealed AS "tokenSealed", i.bot_name AS username,
        ${planId}::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM plans pl JOIN plan_targets pt ON pt.plan_id = pl.id JOIN targets t ON t.id = pt.target_id
                WHERE pl.id = ${planId}::uuid AND pl.project_id = p.id AND pl.deleted_at IS NULL AND t.platform = 'telegram' AND t.is_enabled) AS "planGrantsTelegram"
      FROM projects p LEFT JOIN integrations i ON i.project_id = p.id AND i.platform = 'telegram'
      WHERE p.id = ${projectId}`);
    const row = rowsOf<{ tokenSealed: string | null; username: string | null; planGrantsTelegram: boolean }>(result)[0];
    if (!row) return null;
    return { bot: row.tokenSealed ? { tokenSealed: row.tokenSealed, username: row.username } : null, planGrantsTelegram: row.planGrantsTelegram };
  }

  /** Records a used answer; answers expired an hour ago go with it, so the table holds only answers still recent. */
  async spendTelegramLogin(u: { hashDigest: string; projectId: string; usedAt: Date; expiresAt: Date }): Promise<boolean> {
    const result = await this.db.execute(sql`
      WITH swept AS (DELETE FROM telegram_logins WHERE expires_at < ${at(new Date(u.usedAt.getTime() - 3_600_000))})
      INSERT INTO telegram_logins (hash_digest, project_id, used_at, expires_at)
      VALUES (${u.hashDigest}, ${u.projectId}, ${at(u.usedAt)}, ${at(u.expiresAt)})
      ON CONFLICT (hash_digest) DO NOTHING
      RETURNING 1 AS spent`);
    return rowsOf(result).length === 1;
  }
}

export { GUILD_OF };
