/**
 * The recovery matrix: for each thing a customer can lose, the sets of proofs ("alternatives")
 * that together prove who they are. Any one alternative suffices. The bank sets it with
 * RECOVERY_PROOFS_PASSWORD, RECOVERY_PROOFS_PIN, RECOVERY_PROOFS_MFA and RECOVERY_PROOFS_DEVICE:
 * alternatives separated by `|`, proofs by `+` (`email_code+sms_code|totp+email_code`).
 *
 * Every setting is checked when the configuration loads, and a bad one stops start-up naming the
 * variable. The rules a fraud team would insist on:
 *
 * - at least two proofs per alternative: one stolen thing is never enough;
 * - at least one possession proof per alternative (a code sent to a contact on file, an
 *   authenticator code, a backup code, a branch's approval): knowledge alone (security answers,
 *   the password, the PIN) is what a data breach leaks;
 * - no alternative proves the lost thing with itself (no password to recover a password, no PIN
 *   for a PIN, no authenticator or backup code for lost second factors).
 *
 * This file is pure (no configuration, no database): src/platform/config.ts reads the settings
 * through `readRecoveryMatrix`.
 */

export const RECOVERY_KINDS = ['password', 'pin', 'mfa', 'device'] as const;
/** What a customer lost. */
export type RecoveryKind = (typeof RECOVERY_KINDS)[number];

export const PROOFS = ['email_code', 'sms_code', 'totp', 'backup_code', 'branch_approval', 'security_questions', 'password', 'pin'] as const;
export type Proof = (typeof PROOFS)[number];

/** Something the person holds: a contact on file, an authenticator, a backup code, or themselves in a branch. */
export const POSSESSION_PROOFS: ReadonlySet<Proof> = new Set<Proof>(['email_code', 'sms_code', 'totp', 'backup_code', 'branch_approval']);

/** Given by a bank operator who saw the person (approvals.ts): never through the customer's own routes. */
export const OPERATOR_PROOFS: ReadonlySet<Proof> = new Set<Proof>(['branch_approval']);

/** Proofs that would prove the lost thing with itself. */
export const SELF_PROOFS: Readonly<Record<RecoveryKind, readonly Proof[]>> = {
  password: ['password'],
  pin: ['pin'],
  mfa: ['totp', 'backup_code'],
  device: [],
};

/** One set of proofs that together suffice. */
export type Alternative = readonly Proof[];
export type RecoveryMatrix = Readonly<Record<RecoveryKind, readonly Alternative[]>>;

/** What a bank would start from (docs: "Account recovery"). */
export const DEFAULT_MATRIX_SETTINGS: Readonly<Record<RecoveryKind, string>> = {
  // Not PIN + SMS code: the PIN is shoulder-surfed at a USSD handset, the SIM swapped, and the two fall together.
  password: 'email_code+sms_code|email_code+security_questions|sms_code+security_questions|totp+email_code|totp+sms_code|backup_code+email_code|pin+email_code',
  // Not SMS code + security answers: on USSD the SIM is the channel, so a swap and a breach would be the whole account.
  pin: 'sms_code+password|email_code+password',
  mfa: 'password+email_code+security_questions|password+branch_approval',
  device: 'password+branch_approval',
};

export function matrixVar(kind: RecoveryKind): string {
  return `RECOVERY_PROOFS_${kind.toUpperCase()}`;
}

const isProof = (p: string): p is Proof => (PROOFS as readonly string[]).includes(p);

/**
 * Parses one kind's setting into its alternatives, or (none then) the problems, each naming the
 * variable. Spaces around names are ignored; proofs are kept in the order written.
 */
export function parseAlternatives(kind: RecoveryKind, raw: string): { alternatives: Alternative[]; problems: string[] } {
  const name = matrixVar(kind);
  const problems: string[] = [];
  const alternatives: Alternative[] = [];
  const parts = raw.split('|').map((a) => a.trim());
  if (raw.trim() === '') return { alternatives, problems: [`${name} must name at least one alternative, such as ${DEFAULT_MATRIX_SETTINGS[kind].split('|')[0]}`] };
  for (const [i, part] of parts.entries()) {
    const where = `${name}: alternative ${i + 1} ("${part}")`;
    const proofs = part.split('+').map((p) => p.trim());
    const unknown = proofs.filter((p) => !isProof(p));
    if (unknown.length > 0) {
      problems.push(`${where} names ${unknown.map((p) => `"${p}"`).join(', ')}, not a proof; proofs are ${PROOFS.join(', ')}`);
      continue;
    }
    const known = proofs as Proof[];
    if (new Set(known).size !== known.length) problems.push(`${where} names a proof twice`);
    if (new Set(known).size < 2) problems.push(`${where} must hold at least 2 different proofs: one stolen thing must never be enough`);
    if (!known.some((p) => POSSESSION_PROOFS.has(p))) problems.push(`${where} must hold a possession proof (${[...POSSESSION_PROOFS].join(', ')}): knowledge alone is what a data breach leaks`);
    const self = known.filter((p) => SELF_PROOFS[kind].includes(p));
    if (self.length > 0) problems.push(`${where} proves the lost ${kind} with ${self.join(', ')}, the lost thing itself`);
    alternatives.push(known);
  }
  return problems.length > 0 ? { alternatives: [], problems } : { alternatives, problems };
}

/** Reads every kind's setting (default when unset); problems are pushed onto `problems`. */
export function readRecoveryMatrix(opt: (name: string) => string | undefined, problems: string[]): RecoveryMatrix {
  const out = {} as Record<RecoveryKind, readonly Alternative[]>;
  for (const kind of RECOVERY_KINDS) {
    const parsed = parseAlternatives(kind, opt(matrixVar(kind)) ?? DEFAULT_MATRIX_SETTINGS[kind]);
    problems.push(...parsed.problems);
    out[kind] = parsed.alternatives;
  }
  return out;
}

/** The proofs any alternative of `kind` names, in the order they first appear. */
export function proofsOf(alternatives: readonly Alternative[]): Proof[] {
  return [...new Set(alternatives.flat())];
}

/** True when every proof of some alternative has been given. */
export function isMet(alternatives: readonly Alternative[], given: ReadonlySet<Proof>): boolean {
  return alternatives.some((a) => a.every((p) => given.has(p)));
}

/** The alternatives none of whose proofs is locked (out of attempts and not given). */
export function liveAlternatives(alternatives: readonly Alternative[], given: ReadonlySet<Proof>, locked: ReadonlySet<Proof>): Alternative[] {
  return alternatives.filter((a) => a.every((p) => given.has(p) || !locked.has(p)));
}

/** The fewest proofs still to give to meet a live alternative (0 when one is met). */
export function stillNeeded(alternatives: readonly Alternative[], given: ReadonlySet<Proof>, locked: ReadonlySet<Proof> = new Set()): number {
  const live = liveAlternatives(alternatives, given, locked);
  if (live.length === 0) return 0;
  return Math.min(...live.map((a) => a.filter((p) => !given.has(p)).length));
}

/**
 * Whether a knowledge proof may be given now: only once a possession proof of an alternative
 * that holds it has been given. Answers and passwords are never checked for someone who holds
 * nothing yet, so these routes are no oracle for guessing them, and the questions a customer
 * chose are never shown to a stranger.
 */
export function knowledgeUnlocked(alternatives: readonly Alternative[], proof: Proof, given: ReadonlySet<Proof>): boolean {
  if (POSSESSION_PROOFS.has(proof)) return true;
  return alternatives.some((a) => a.includes(proof) && a.some((p) => POSSESSION_PROOFS.has(p) && given.has(p)));
}
