/**
 * The FAQ knowledge base (issue 13; SPEC "FAQ", "FAQ (REST)", "FAQ assistant tools"): public
 * search and reading with feedback, administration (`faq.manage`), and the three assistant tools
 * over MCP at `/mcp` (`access_ai_chat`).
 */
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Logger } from 'pino';
import type { DatabaseHandle, Db } from '../platform/db/database.js';
import { makeAjv } from '../platform/http/app.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { FaqAdmin } from './admin.js';
import { faqAdminRoutes } from './admin-routes.js';
import { mcpRoutes } from './mcp.js';
import { faqRoutes } from './routes.js';
import { Vocabulary } from './vocabulary.js';
import { FaqService } from './service.js';
import { FaqStore } from './store.js';

export interface FaqDeps {
  db: Db;
  log: Logger;
  database: Pick<DatabaseHandle, 'indexScans' | 'bus'>;
  clock: Clock;
  audit: AuditLog;
  guard: Guard;
  users: UserStore;
  ipHasher: Hasher;
}

export interface FaqProvides {
  faq: FaqService;
  faqAdmin: FaqAdmin;
  faqStore: FaqStore;
}

export function faqModule(deps: FaqDeps): Module<FaqProvides> {
  const faqStore = new FaqStore({ db: deps.db, clock: deps.clock });
  const vocabulary = new Vocabulary({ db: deps.db, clock: deps.clock, bus: deps.database.bus, log: deps.log });
  const faq = new FaqService({ db: deps.db, indexScans: deps.database.indexScans, vocabulary, store: faqStore, log: deps.log });
  const faqAdmin = new FaqAdmin({ db: deps.db, store: faqStore, audit: deps.audit, vocabulary, ajv: makeAjv({ coerceTypes: false, removeAdditional: false }) });
  return {
    name: 'faq',
    provides: { faq, faqAdmin, faqStore },
    tags: [
      { name: 'FAQ', description: 'The help articles: search, categories, articles and feedback. Public (no sign-in needed).' },
      { name: 'FAQ administration', description: 'Create, edit, soft delete, reorder, import and export help articles (permission `faq.manage`).' },
      { name: 'Assistant tools (MCP)', description: 'The FAQ as Model Context Protocol tools for assistants, at `/mcp` (permission `access_ai_chat`).' },
    ],
    routes: async (app) => {
      await app.register(faqRoutes({ faq, guard: deps.guard, ipHasher: deps.ipHasher }));
      await app.register(faqAdminRoutes({ faqAdmin, faqStore, users: deps.users, guard: deps.guard }));
      await app.register(mcpRoutes({ faq, guard: deps.guard, version: '0.1.0' }));
    },
  };
}
