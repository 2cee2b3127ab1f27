/** Identifier shapes (docs/api-contract.md, "Identifiers"). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const USER_ID_PATTERN = '^[0-9]{1,32}$';

const uuid = new RegExp(UUID_PATTERN);
const userId = new RegExp(USER_ID_PATTERN);

export const isUuid = (value: string): boolean => uuid.test(value);
export const isUserId = (value: string): boolean => userId.test(value);
