/**
 * Consent (issue 28): purposes the bank configures with versioned texts, each person's answers
 * as an append-only history and a current state, the routes to read and change them, and the
 * administrators' routes (purposes, texts, who consented for a campaign). The data export reads
 * a person's consents with `consentsOf` (store.ts).
 */
import type { AuditLog } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { consentRoutes } from './routes.js';
import { ConsentService } from './service.js';
import { ConsentStore } from './store.js';

export interface ConsentModuleDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  guard: Guard;
  users: UserStore;
}

export interface ConsentProvides {
  consent: ConsentService;
}

export function consentModule(deps: ConsentModuleDeps): Module<ConsentProvides> {
  const consent = new ConsentService({ db: deps.db, clock: deps.clock, audit: deps.audit, store: new ConsentStore(deps.db) });
  return {
    name: 'consent',
    provides: { consent },
    tags: [{ name: 'Consent', description: 'Consent per purpose (marketing by email or SMS, analytics, sharing with partners, terms of service): your answers with the version and hash of the text, given or withdrawn in one call, every change kept; the bank\'s purposes and texts, and who consented to a purpose for a campaign (administrators).' }],
    routes: consentRoutes({ consent, guard: deps.guard, users: deps.users }),
  };
}
