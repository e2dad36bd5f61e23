/**
 * The rate limits of the authentication routes (issue 10, section 3; docs/decisions.md "Rate
 * limits"). Each route belongs to one group; a group counts requests per client (the client's
 * network: an IPv4 address or an IPv6 /64; for USSD, the gateway) and per account (what the
 * request names or who is signed in), each in a fixed window shared by every node.
 *
 * `RATE_LIMIT_<GROUP>_<IP|ACCOUNT>` sets one limit: `<count>/<window>` (`30/1m`, `5/15m`, `600/1h`,
 * `10/30s`) or `off`. SIGNIN_RATE_LIMIT_PER_MINUTE, older, still sets the sign-in limit per client.
 */

export const RATE_GROUPS = ['signin', 'ussd', 'second_factor', 'push_approval_wait', 'push_approval_answer', 'recovery', 'token', 'account', 'faq_search', 'faq_feedback'] as const;
export type RateGroup = (typeof RATE_GROUPS)[number];
export type RateDimension = 'ip' | 'account';

export interface RateRule {
  readonly limit: number;
  readonly windowSec: number;
}

export type RateLimits = Readonly<Record<RateGroup, Readonly<Record<RateDimension, RateRule | null>>>>;

const minute = (limit: number): RateRule => ({ limit, windowSec: 60 });

/**
 * What a bank would start from. Per client: generous enough for a branch or a carrier's NAT,
 * tight enough that guessing is slow. Per account: a person signs in a few times an hour, so a
 * burst on one name is someone else; short windows keep that from locking the owner out for long.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  /** Password sign-in on web and mobile (and LDAP, SAML): per address and per username. */
  signin: { ip: minute(30), account: minute(10) },
  /** USSD: per gateway (all its subscribers together) and per subscriber. */
  ussd: { ip: minute(600), account: minute(10) },
  /** Second-factor checks and code requests: per address and per challenge or user. */
  second_factor: { ip: minute(30), account: minute(10) },
  /**
   * A page waiting for the phone's push approval (its completion polls: a long poll counts once
   * per call, about 3 a minute; a plain poll every 2 s, 30): per address (many pages behind one
   * NAT) and per user. Nothing is guessed there: the approval is the phone's.
   */
  push_approval_wait: { ip: minute(600), account: minute(60) },
  /**
   * The phone's signed answer to a push approval: per address (many phones behind a carrier's
   * NAT) and per user, apart from the pages' buckets so that neither a waiting page nor someone
   * with the password asking again and again can keep the owner from answering (or reporting fraud).
   */
  push_approval_answer: { ip: minute(600), account: minute(20) },
  /**
   * Password, PIN and MFA recovery: per address and per named account, reset token or recovery
   * workflow (a password recovery takes four or five calls; each proof also has its own 3 attempts).
   */
  recovery: { ip: minute(10), account: { limit: 10, windowSec: 15 * 60 } },
  /** Refresh and sign-out: per address only (the token itself is the unguessable credential). */
  token: { ip: minute(300), account: null },
  /** A signed-in user's credential changes: per address and per user. */
  account: { ip: minute(60), account: minute(20) },
  /** FAQ search, over REST and by the assistant tools (MCP): per address and per signed-in user. */
  faq_search: { ip: minute(120), account: minute(60) },
  /** FAQ feedback (helpful, unhelpful): per address and per signed-in user; one vote per voter and article anyway. */
  faq_feedback: { ip: minute(20), account: { limit: 100, windowSec: 3600 } },
};

const WINDOW = /^(\d{1,6})\/(\d{1,5})([smh])$/;
const UNIT_SEC = { s: 1, m: 60, h: 3600 } as const;

/** `30/1m` → 30 per 60 s; `off` → null; anything else → an explanation. */
export function parseRateRule(raw: string): RateRule | null | string {
  if (raw.toLowerCase() === 'off') return null;
  const m = WINDOW.exec(raw.trim());
  if (!m) return 'must be <count>/<window> such as 30/1m, 5/15m or 600/1h, or off';
  const limit = Number(m[1]);
  const windowSec = Number(m[2]) * UNIT_SEC[m[3] as keyof typeof UNIT_SEC];
  if (limit < 1) return 'must allow at least 1 request';
  if (windowSec < 1 || windowSec > 24 * 3600) return 'must have a window from 1s to 24h';
  return { limit, windowSec };
}

export function rateLimitVar(group: RateGroup, dimension: RateDimension): string {
  return `RATE_LIMIT_${group.toUpperCase()}_${dimension.toUpperCase()}`;
}

/** Reads every group's limits; problems are pushed onto `problems` with the variable named. */
export function readRateLimits(opt: (name: string) => string | undefined, signinPerMinute: number | undefined, problems: string[]): RateLimits {
  const out = {} as Record<RateGroup, Record<RateDimension, RateRule | null>>;
  for (const group of RATE_GROUPS) {
    const limits = { ...DEFAULT_RATE_LIMITS[group] };
    if (group === 'signin' && signinPerMinute !== undefined) limits.ip = minute(signinPerMinute);
    for (const dimension of ['ip', 'account'] as const) {
      const name = rateLimitVar(group, dimension);
      const raw = opt(name);
      if (raw === undefined) continue;
      const rule = parseRateRule(raw);
      if (typeof rule === 'string') problems.push(`${name} ${rule} (got "${raw}")`);
      else limits[dimension] = rule;
    }
    out[group] = limits;
  }
  return out;
}
