/**
 * The categories of personal data a breach may have exposed: a fixed list, so that the record a
 * regulator reads and the notices people receive name the same things in every language.
 */
export const BREACH_CATEGORIES = [
  'credentials', 'contact_details', 'identity_data', 'session_tokens', 'device_tokens',
  'second_factor_secrets', 'security_answers', 'audit_data', 'location_data',
] as const;
export type BreachCategory = (typeof BREACH_CATEGORIES)[number];

/** What each category covers (the API's description of the list). */
export const CATEGORY_MEANING: Record<BreachCategory, string> = {
  credentials: 'password hashes, PINs or temporary passwords',
  contact_details: 'email addresses and phone numbers',
  identity_data: 'names, usernames, dates of birth',
  session_tokens: 'access and refresh tokens, session identifiers',
  device_tokens: 'push tokens and device bindings',
  second_factor_secrets: 'authenticator secrets, backup codes, one-time codes',
  security_answers: 'answers to security questions',
  audit_data: 'sign-in history: client addresses, user agents, device fingerprints',
  location_data: 'locations reported by devices',
};
