/** The answer of GET /api/v1/admin/users/{id}/factors, and its rows as the user screen lists them. */
import type { MessageKey } from '../../lib/i18n.js';

interface Dates { enrolled_at: string; last_used_at: string | null }
/** Codes and push approval: their uses are known only for `uses_kept_days` (the codes and requests are deleted after). */
interface KeptDates extends Dates { uses_kept_days: number }

export interface UserFactorsAnswer {
  user_id: string;
  enrolled: string[];
  factors: {
    authenticator_app: Dates | null;
    backup_codes: { left: number; issued: number; issued_at: string | null; last_used_at: string | null };
    email_codes: KeptDates | null;
    sms_codes: KeptDates | null;
    push_codes: (KeptDates & { device_name: string | null }) | null;
    push_approval: (KeptDates & { device_name: string | null; paused_until: string | null }) | null;
    passkeys: Array<{ name: string; created_at: string; last_used_at: string | null; synced: boolean; suspended: boolean }>;
    security_questions: { count: number; set_at: string | null; questions: string[] };
  };
}

export type FactorKind = 'totp' | 'backupCodes' | 'email' | 'sms' | 'push' | 'pushApproval' | 'passkey' | 'questions';

export interface FactorRow {
  id: string;
  kind: FactorKind;
  enrolledAt: string | null;
  lastUsedAt: string | null;
  /** Set where uses are known only this many days back: no `lastUsedAt` then means none in that time, not never. */
  keptDays: number | null;
  detail: { key: MessageKey; values: Record<string, string | number> } | null;
}

const device = (name: string | null): FactorRow['detail'] => (name ? { key: 'users.factors.device', values: { name } } : null);

/** One row per enrolled factor, in the order an operator reads them; passkeys one each (their full list is the Passkeys section). */
export function factorRows(f: UserFactorsAnswer['factors']): FactorRow[] {
  const rows: FactorRow[] = [];
  const add = (kind: FactorKind, d: (Dates & { uses_kept_days?: number }) | null, detail: FactorRow['detail'] = null, id: string = kind) => {
    if (d) rows.push({ id, kind, enrolledAt: d.enrolled_at, lastUsedAt: d.last_used_at, keptDays: d.uses_kept_days ?? null, detail });
  };
  add('totp', f.authenticator_app);
  if (f.backup_codes.issued > 0) {
    rows.push({ id: 'backupCodes', kind: 'backupCodes', enrolledAt: f.backup_codes.issued_at, lastUsedAt: f.backup_codes.last_used_at, keptDays: null, detail: { key: 'users.factors.codesLeft', values: { left: f.backup_codes.left, issued: f.backup_codes.issued } } });
  }
  add('email', f.email_codes);
  add('sms', f.sms_codes);
  add('push', f.push_codes, device(f.push_codes?.device_name ?? null));
  const paused = f.push_approval?.paused_until ?? null;
  add('pushApproval', f.push_approval, paused ? { key: 'users.factors.paused', values: { until: paused } } : device(f.push_approval?.device_name ?? null));
  f.passkeys.forEach((p, i) => add('passkey', { enrolled_at: p.created_at, last_used_at: p.last_used_at }, { key: p.suspended ? 'users.factors.passkeySuspended' : 'users.factors.passkeyName', values: { name: p.name } }, `passkey-${i}`));
  if (f.security_questions.count > 0) {
    rows.push({ id: 'questions', kind: 'questions', enrolledAt: f.security_questions.set_at, lastUsedAt: null, keptDays: null, detail: { key: 'users.factors.questionsCount', values: { count: f.security_questions.count } } });
  }
  return rows;
}

/** What the "last used" cell says when there is no date: never since enrolment, or (codes, push approval) none in the days kept. */
export function notUsed(r: Pick<FactorRow, 'keptDays'>): { key: MessageKey; values?: Record<string, number> } {
  if (r.keptDays === null) return { key: 'users.factors.never' };
  return r.keptDays === 1 ? { key: 'users.factors.notLastDay' } : { key: 'users.factors.notLastDays', values: { days: r.keptDays } };
}
