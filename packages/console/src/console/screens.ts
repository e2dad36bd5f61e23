/**
 * The operator console's screens, in navigation order. A new screen is one file (its component)
 * and one entry here: its path under /console, its navigation label (a catalogue key), the group
 * it is listed under, and the permission it needs; the shell shows only those the operator's
 * permissions allow.
 */
import { createElement } from 'react';
import type { Screen } from '../lib/router.js';
import { AlertScreen } from './alerts/AlertScreen.js';
import { AlertsScreen } from './alerts/AlertsScreen.js';
import { DeviceBindingsScreen } from './approvals/DeviceBindingsScreen.js';
import { ErasuresScreen } from './approvals/ErasuresScreen.js';
import { MfaResetsScreen } from './approvals/MfaResetsScreen.js';
import { RecoveriesScreen } from './approvals/RecoveriesScreen.js';
import { AuditScreen } from './audit/AuditScreen.js';
import { KeysScreen } from './config/KeysScreen.js';
import { LdapScreen } from './config/LdapScreen.js';
import { RateLimitsScreen } from './config/RateLimitsScreen.js';
import { SamlScreen } from './config/SamlScreen.js';
import { FaqArticleScreen, NewFaqScreen } from './config/faq/FaqArticleScreen.js';
import { FaqScreen } from './config/faq/FaqScreen.js';
import { TemplateScreen } from './config/templates/TemplateScreen.js';
import { TemplatesScreen } from './config/templates/TemplatesScreen.js';
import { EntitiesScreen } from './entities/EntitiesScreen.js';
import { PoliciesScreen } from './policies/PoliciesScreen.js';
import { PolicyEditScreen } from './policies/PolicyEditScreen.js';
import { TesterScreen } from './policies/TesterScreen.js';
import { RoleScreen } from './roles/RoleScreen.js';
import { RolesScreen } from './roles/RolesScreen.js';
import { NewUserScreen } from './users/NewUserScreen.js';
import { UserScreen } from './users/UserScreen.js';
import { UsersScreen } from './users/UsersScreen.js';

/** The navigation's groups, in order. */
const G = {
  people: 'nav.group.people',
  approvals: 'nav.group.approvals',
  security: 'nav.group.security',
  content: 'nav.group.content',
  settings: 'nav.group.settings',
} as const;

export const CONSOLE_SCREENS: readonly Screen[] = [
  // People
  { path: 'users', nav: 'nav.users', group: G.people, permission: 'users.read', render: () => createElement(UsersScreen) },
  { path: 'users/new', nav: 'nav.newUser', group: G.people, permission: 'users.create', render: () => createElement(NewUserScreen) },
  { path: 'users/:id', permission: 'users.read', render: ({ id }) => createElement(UserScreen, { id: id! }) },
  { path: 'roles', nav: 'roles.nav', group: G.people, permission: 'roles.read', render: () => createElement(RolesScreen) },
  { path: 'roles/:name', permission: 'roles.read', render: ({ name }) => createElement(RoleScreen, { name: name! }) },
  { path: 'entities', nav: 'entities.nav', group: G.people, permission: 'entities.manage', render: () => createElement(EntitiesScreen) },
  // Approvals (four eyes)
  { path: 'device-bindings', nav: 'approvals.nav.deviceBindings', group: G.approvals, permission: 'devices.manage', render: () => createElement(DeviceBindingsScreen) },
  { path: 'recoveries', nav: 'approvals.nav.recoveries', group: G.approvals, permission: 'recovery.approve', render: () => createElement(RecoveriesScreen) },
  { path: 'mfa-resets', nav: 'queues.nav.mfaResets', group: G.approvals, permission: 'approve_mfa_reset', render: () => createElement(MfaResetsScreen) },
  { path: 'erasures', nav: 'queues.nav.erasures', group: G.approvals, permission: 'gdpr.read', render: () => createElement(ErasuresScreen) },
  // Security
  { path: 'audit', nav: 'nav.audit', group: G.security, permission: 'audit.read', render: () => createElement(AuditScreen) },
  { path: 'alerts', nav: 'alerts.nav', group: G.security, permission: 'alerts.manage', render: () => createElement(AlertsScreen) },
  { path: 'alerts/:id', permission: 'alerts.manage', render: ({ id }) => createElement(AlertScreen, { id: id! }) },
  { path: 'policies', nav: 'policies.nav.policies', group: G.security, permission: 'policies.manage', render: () => createElement(PoliciesScreen) },
  { path: 'policies/new', permission: 'policies.manage', render: () => createElement(PolicyEditScreen, {}) },
  { path: 'policies/tester', nav: 'policies.nav.tester', group: G.security, permission: 'policies.manage', render: () => createElement(TesterScreen) },
  { path: 'policies/:id', permission: 'policies.manage', render: ({ id }) => createElement(PolicyEditScreen, { id: id! }) },
  // Content
  { path: 'templates', nav: 'content.nav.templates', group: G.content, permission: 'notifications.templates', render: () => createElement(TemplatesScreen) },
  { path: 'templates/:name', permission: 'notifications.templates', render: ({ name }) => createElement(TemplateScreen, { name: name! }) },
  { path: 'faq', nav: 'content.nav.faq', group: G.content, permission: 'faq.manage', render: () => createElement(FaqScreen) },
  { path: 'faq/new', permission: 'faq.manage', render: () => createElement(NewFaqScreen) },
  { path: 'faq/:id', permission: 'faq.manage', render: ({ id }) => createElement(FaqArticleScreen, { id: id! }) },
  // Settings
  { path: 'settings/ldap', nav: 'config.nav.ldap', group: G.settings, permission: 'config.manage', render: () => createElement(LdapScreen) },
  { path: 'settings/saml', nav: 'config.nav.saml', group: G.settings, permission: 'config.manage', render: () => createElement(SamlScreen) },
  { path: 'settings/rate-limits', nav: 'config.nav.rateLimits', group: G.settings, permission: 'config.manage', render: () => createElement(RateLimitsScreen) },
  { path: 'settings/keys', nav: 'config.nav.keys', group: G.settings, permission: 'config.manage', render: () => createElement(KeysScreen) },
];
