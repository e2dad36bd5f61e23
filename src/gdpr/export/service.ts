/**
 * Export and portability (issue 28): reads every section the personal-data registry names for
 * the signed-in person, renders it (JSON, a ZIP of CSV files, or a SCIM `User`), and records
 * what was sent in the request log and the audit trail, in one transaction.
 */
import { stepUpRequired, STEP_UP_FRESH_MINUTES } from '../../mfa/challenge.js';
import type { AuditLog, AuditContext } from '../../audit/service.js';
import type { FactorStore } from '../../mfa/factors.js';
import type { Clock } from '../../platform/clock.js';
import type { SensitiveColumns } from '../../platform/crypto/sensitive.js';
import type { Db } from '../../platform/db/database.js';
import type { AuthContext } from '../../sessions/guard.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { toCsv } from './csv.js';
import { GdprExportErrors } from './errors.js';
import { EXPORT_SECTIONS, type ExportContext, type Row } from './registry.js';
import { scimUser } from './scim.js';
import { GdprRequestStore, type RequestRecord } from './store.js';
import { zip } from './zip.js';

/** Audit events older than this many months are left out of an export (the note says how to get them). */
export const AUDIT_MONTHS = 13;
/** At most this many audit events in an export. */
export const AUDIT_CAP = 1000;
export const EXPORT_FORMAT = 'strongroom-export/1';

export interface GdprExportDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  sensitive: SensitiveColumns;
  audit: AuditLog;
  factors: FactorStore;
  /** The bank's name (the SCIM enterprise `organization`). */
  organization: string;
}

export interface Collected {
  generatedAt: Date;
  sections: Map<string, Row[]>;
  notes: Record<string, string>;
}

/** Who asked, for the request log and the audit entry. */
export interface Asker {
  user: UserRow;
  context: AuditContext;
  encrypted: boolean;
}

export class GdprExportService {
  readonly requests: GdprRequestStore;

  constructor(private readonly d: GdprExportDeps) {
    this.requests = new GdprRequestStore(d.db);
  }

  /**
   * An export is a full copy of the person's data: the session must have been signed in, or
   * stepped up with a second factor, within the last STEP_UP_FRESH_MINUTES. Otherwise 403
   * STEP_UP_REQUIRED (naming the factors' step-up routes) when the person has a second factor,
   * 403 GDPR_REAUTHENTICATION_REQUIRED (sign in again) when they have none.
   */
  async requireRecentAuthentication(auth: AuthContext): Promise<void> {
    const row = await this.d.db.selectFrom('sessions').select('mfa_verified_at').where('session_id', '=', auth.session.sessionId).executeTakeFirst();
    const stepUp = row?.mfa_verified_at ? new Date(row.mfa_verified_at).getTime() : 0;
    if (this.d.clock.now() - Math.max(auth.session.createdAt, stepUp) <= STEP_UP_FRESH_MINUTES * 60_000) return;
    const enrolled = await this.d.factors.active(auth.session.userId);
    if (enrolled.length > 0) throw stepUpRequired(enrolled);
    throw GdprExportErrors.GDPR_REAUTHENTICATION_REQUIRED({ within_minutes: STEP_UP_FRESH_MINUTES, signed_in_at: new Date(auth.session.createdAt).toISOString() });
  }

  /** Every exported section of the registry, read for `user`. */
  async collect(user: UserRow): Promise<Collected> {
    const generatedAt = new Date(this.d.clock.now());
    const auditSince = new Date(generatedAt);
    auditSince.setUTCMonth(auditSince.getUTCMonth() - AUDIT_MONTHS);
    const ctx: ExportContext = { db: this.d.db, user, users: this.d.users, sensitive: this.d.sensitive, clock: this.d.clock, auditSince, auditCap: AUDIT_CAP };
    const sections = new Map<string, Row[]>();
    for (const s of EXPORT_SECTIONS) sections.set(s.section, await s.read(ctx));
    const shown = sections.get('audit_events')?.length ?? 0;
    const notes = {
      audit_events: `The security events recorded about you since ${auditSince.toISOString()} (${AUDIT_MONTHS} months), newest first, at most ${AUDIT_CAP}`
        + `${shown >= AUDIT_CAP ? ' (this export reached that limit)' : ''}. For older events, or more of them, ask the bank's data-protection officer: `
        + `the bank keeps them for its retention period and reads them by your user id (${user.uuid}).`,
    };
    return { generatedAt, sections, notes };
  }

  /** The JSON document: `generated_at`, `user_id`, a table of contents, the notes, then one key per section. */
  renderJson(user: UserRow, c: Collected): Record<string, unknown> {
    return {
      format: EXPORT_FORMAT, generated_at: c.generatedAt.toISOString(), user_id: user.uuid,
      sections: EXPORT_SECTIONS.map((s) => ({ name: s.section, description: s.description, columns: s.columns, rows: c.sections.get(s.section)!.length })),
      notes: c.notes,
      ...Object.fromEntries(c.sections),
    };
  }

  /** A ZIP of one CSV per section (`<section>.csv`), a README.txt describing each, and manifest.json. */
  renderZip(user: UserRow, c: Collected): Buffer {
    const files = EXPORT_SECTIONS.map((s) => ({ name: `${s.section}.csv`, data: Buffer.from(`\uFEFF${toCsv(s.columns, c.sections.get(s.section)!)}`, 'utf8') }));
    const readme = [
      `Everything the bank's authentication service holds about you, user ${user.uuid} (${user.username}), generated ${c.generatedAt.toISOString()}.`,
      'One CSV file per kind of record (UTF-8, comma-separated, first line the column names). Dates are UTC (ISO 8601).',
      'Fields that a spreadsheet would read as a formula start with a single quote.',
      '',
      ...EXPORT_SECTIONS.map((s) => `${s.section}.csv (${c.sections.get(s.section)!.length} rows): ${s.description}`),
      '',
      ...Object.entries(c.notes).map(([k, v]) => `Note on ${k}: ${v}`),
      '',
    ].join('\r\n');
    const manifest = { format: EXPORT_FORMAT, generated_at: c.generatedAt.toISOString(), user_id: user.uuid, files: EXPORT_SECTIONS.map((s) => ({ name: `${s.section}.csv`, section: s.section, columns: s.columns, rows: c.sections.get(s.section)!.length })), notes: c.notes };
    return zip([{ name: 'README.txt', data: Buffer.from(readme, 'utf8') }, { name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest, null, 2), 'utf8') }, ...files], c.generatedAt);
  }

  /** The SCIM `User` of what the person gave: profile, branches, consents. */
  async portability(user: UserRow, location: string): Promise<{ document: Record<string, unknown>; sections: Record<string, number> }> {
    const c = await this.collect(user);
    const profile = c.sections.get('profile')![0]!;
    const branches = c.sections.get('branches') ?? [];
    const consents = c.sections.get('consents') ?? [];
    return { document: scimUser({ profile, branches, consents, organization: this.d.organization, location }), sections: { profile: 1, branches: branches.length, consents: consents.length } };
  }

  /** The request log's row and the audit entry (GDPR_EXPORTED or GDPR_PORTABILITY), together. */
  async log(asker: Asker, r: Pick<RequestRecord, 'kind' | 'format' | 'sections' | 'bytes'>): Promise<string> {
    const { user } = asker;
    return this.d.db.transaction().execute(async (trx) => {
      const at = new Date(this.d.clock.now());
      const id = await this.requests.record(trx, { ...r, userId: user.id, userUuid: user.uuid, channel: asker.context.channel ?? null, encrypted: asker.encrypted, at });
      await this.d.audit.record({
        ...asker.context, eventType: r.kind === 'export' ? 'GDPR_EXPORTED' : 'GDPR_PORTABILITY', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { request_id: id, format: r.format, encrypted: asker.encrypted, sections: r.sections, bytes: r.bytes },
      }, trx);
      return id;
    });
  }
}

/** `{section: rows}` of what was collected. */
export function counts(c: Collected): Record<string, number> {
  return Object.fromEntries([...c.sections].map(([k, v]) => [k, v.length]));
}
