import type { ChatMember, User } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { rightsOf } from './chat-rights.js';

const bot: User = { id: 7204583149, is_bot: true, first_name: 'Door' };

/** An administrator with every right but those given. */
function admin(rights: { can_invite_users: boolean; can_restrict_members: boolean }): ChatMember {
  return {
    status: 'administrator',
    user: bot,
    can_be_edited: false,
    is_anonymous: false,
    can_manage_chat: true,
    can_delete_messages: true,
    can_manage_video_chats: true,
    can_promote_members: false,
    can_change_info: true,
    can_post_stories: false,
    can_edit_stories: false,
    can_delete_stories: false,
    ...rights,
  } as ChatMember;
}

describe('rightsOf', () => {
  it.each([
    ['an admin with both rights', admin({ can_invite_users: true, can_restrict_members: true }), [true, true, true]],
    ['an admin who cannot ban', admin({ can_invite_users: true, can_restrict_members: false }), [true, true, false]],
    ['an admin who cannot invite', admin({ can_invite_users: false, can_restrict_members: true }), [true, false, true]],
    ['the owner', { status: 'creator', user: bot, is_anonymous: false } as ChatMember, [true, true, true]],
  ])('%s', (_what, member, [isAdmin, canInviteUsers, canRestrictMembers]) => {
    expect(rightsOf(member)).toStrictEqual({ isAdmin, canInviteUsers, canRestrictMembers, error: null });
  });

  it.each([
    ['a member', { status: 'member', user: bot } as ChatMember],
    ['a restricted member', { status: 'restricted', user: bot, is_member: true, until_date: 0 } as unknown as ChatMember],
  ])('%s has no rights and no error: it is in the chat', (_what, member) => {
    expect(rightsOf(member)).toStrictEqual({ isAdmin: false, canInviteUsers: false, canRestrictMembers: false, error: null });
  });

  it.each([
    ['left', { code: 'bot_not_in_chat', message: 'The bot is not a member of this chat: add it as an admin' }],
    ['kicked', { code: 'bot_kicked', message: 'The bot was banned from this chat: unban it, then add it again as an admin' }],
  ] as const)('a bot that is %s says so', (status, error) => {
    const member = (status === 'kicked' ? { status, user: bot, until_date: 0 } : { status, user: bot }) as ChatMember;
    expect(rightsOf(member)).toStrictEqual({ isAdmin: false, canInviteUsers: false, canRestrictMembers: false, error });
  });
});
