/**
 * The portability document: the data the person gave, as a SCIM 2.0 `User` resource (RFC 7643
 * section 4.1) that another provider's SCIM endpoint takes as it is. Core attributes for what
 * SCIM has (userName, name, displayName, emails, phoneNumbers, preferredLanguage, active, meta);
 * the enterprise extension (section 4.3) for the bank and the branch; our own extension for what
 * SCIM lacks (date of birth, branches, consents).
 */
import type { Row } from './registry.js';

export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const SCIM_STRONGROOM = 'urn:strongroom:params:scim:schemas:extension:person:1.0:User';
export const SCIM_CONTENT_TYPE = 'application/scim+json';

export interface PortabilityInput {
  profile: Row;
  branches: readonly Row[];
  consents: readonly Row[];
  organization: string;
  /** The absolute URL the document was served from (`meta.location`). */
  location: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** RFC 3966 `tel:` URI of an E.164 number (RFC 7643 4.1.2 asks phone numbers in that form). */
export const telUri = (phone: string): string => `tel:${phone.replace(/[^+0-9]/g, '')}`;

export function scimUser(p: PortabilityInput): Record<string, unknown> {
  const { profile } = p;
  const fullName = str(profile.full_name);
  const email = str(profile.email);
  const phone = str(profile.phone);
  const primaryBranch = p.branches[0];
  return {
    schemas: [SCIM_USER, SCIM_ENTERPRISE, SCIM_STRONGROOM],
    id: profile.id,
    userName: profile.username,
    ...(fullName ? { name: { formatted: fullName }, displayName: fullName } : { displayName: profile.username }),
    emails: email ? [{ value: email, type: 'home', primary: true }] : [],
    phoneNumbers: phone ? [{ value: telUri(phone), type: 'mobile', primary: true }] : [],
    preferredLanguage: str(profile.language) ?? 'en',
    active: profile.is_active === true,
    [SCIM_ENTERPRISE]: { organization: p.organization, ...(primaryBranch ? { department: primaryBranch.name } : {}) },
    [SCIM_STRONGROOM]: {
      dateOfBirth: str(profile.date_of_birth),
      branches: p.branches.map((b) => ({ value: b.code, display: b.name })),
      consents: p.consents.map((c) => ({ purpose: c.purpose, given: c.given, version: c.version, changed: c.changed_at })),
    },
    meta: { resourceType: 'User', created: profile.created_at, lastModified: profile.updated_at ?? profile.created_at, location: p.location },
  };
}
