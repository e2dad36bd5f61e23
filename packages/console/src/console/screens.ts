/**
 * The operator console's screens, in navigation order. A new screen is one file (its component)
 * and one entry here: its path under /console, its navigation label (a catalogue key), and the
 * permission it needs; the shell shows only those the operator's permissions allow.
 */
import { createElement } from 'react';
import type { Screen } from '../lib/router.js';
import { DeviceBindingsScreen } from './approvals/DeviceBindingsScreen.js';
import { RecoveriesScreen } from './approvals/RecoveriesScreen.js';
import { ErasuresScreen } from './approvals/ErasuresScreen.js';
import { MfaResetsScreen } from './approvals/MfaResetsScreen.js';
import { AuditScreen } from './audit/AuditScreen.js';
import { PoliciesScreen } from './policies/PoliciesScreen.js';
import { PolicyEditScreen } from './policies/PolicyEditScreen.js';
import { TesterScreen } from './policies/TesterScreen.js';
import { EntitiesScreen } from './entities/EntitiesScreen.js';
import { RoleScreen } from './roles/RoleScreen.js';
import { RolesScreen } from './roles/RolesScreen.js';
import { KeysScreen } from './config/KeysScreen.js';
import { LdapScreen } from './config/LdapScreen.js';
import { RateLimitsScreen } from './config/RateLimitsScreen.js';
import { SamlScreen } from './config/SamlScreen.js';
import { AlertScreen } from './alerts/AlertScreen.js';
import { AlertsScreen } from './alerts/AlertsScreen.js';
import { NewUserScreen } from './users/NewUserScreen.js';
import { UserScreen } from './users/UserScreen.js';
import { UsersScreen } from './users/UsersScreen.js';
import { FaqArticleScreen, NewFaqScreen } from './config/faq/FaqArticleScreen.js';
import { FaqScreen } from './config/faq/FaqScreen.js';
import { TemplateScreen } from './config/templates/TemplateScreen.js';
import { TemplatesScreen } from './config/templates/TemplatesScreen.js';

export const CONSOLE_SCREENS: readonly Screen[] = [
  { path: 'users', nav: 'nav.users', permission: 'users.read', render: () => createElement(UsersScreen) },
  { path: 'users/new', nav: 'nav.newUser', permission: 'users.create', render: () => createElement(NewUserScreen) },
  { path: 'users/:id', permission: 'users.read', render: ({ id }) => createElement(UserScreen, { id: id! }) },
  { path: 'device-bindings', nav: 'approvals.nav.deviceBindings', permission: 'devices.manage', render: () => createElement(DeviceBindingsScreen) },
  { path: 'recoveries', nav: 'approvals.nav.recoveries', permission: 'recovery.approve', render: () => createElement(RecoveriesScreen) },
  { path: 'mfa-resets', nav: 'queues.nav.mfaResets', permission: 'approve_mfa_reset', render: () => createElement(MfaResetsScreen) },
  { path: 'erasures', nav: 'queues.nav.erasures', permission: 'gdpr.read', render: () => createElement(ErasuresScreen) },
  { path: 'audit', nav: 'nav.audit', permission: 'audit.read', render: () => createElement(AuditScreen) },
  { path: 'policies', nav: 'policies.nav.policies', permission: 'policies.manage', render: () => createElement(PoliciesScreen) },
  { path: 'policies/new', permission: 'policies.manage', render: () => createElement(PolicyEditScreen, {}) },
  { path: 'policies/tester', nav: 'policies.nav.tester', permission: 'policies.manage', render: () => createElement(TesterScreen) },
  { path: 'policies/:id', permission: 'policies.manage', render: ({ id }) => createElement(PolicyEditScreen, { id: id! }) },
  { path: 'roles', nav: 'roles.nav', permission: 'roles.read', render: () => createElement(RolesScreen) },
  { path: 'roles/:name', permission: 'roles.read', render: ({ name }) => createElement(RoleScreen, { name: name! }) },
  { path: 'entities', nav: 'entities.nav', permission: 'entities.manage', render: () => createElement(EntitiesScreen) },
  { path: 'templates', nav: 'content.nav.templates', permission: 'notifications.templates', render: () => createElement(TemplatesScreen) },
  { path: 'templates/:name', permission: 'notifications.templates', render: ({ name }) => createElement(TemplateScreen, { name: name! }) },
  { path: 'faq', nav: 'content.nav.faq', permission: 'faq.manage', render: () => createElement(FaqScreen) },
  { path: 'faq/new', permission: 'faq.manage', render: () => createElement(NewFaqScreen) },
  { path: 'faq/:id', permission: 'faq.manage', render: ({ id }) => createElement(FaqArticleScreen, { id: id! }) },
  // Settings
  { path: 'settings/ldap', nav: 'config.nav.ldap', permission: 'config.manage', render: () => createElement(LdapScreen) },
  { path: 'settings/saml', nav: 'config.nav.saml', permission: 'config.manage', render: () => createElement(SamlScreen) },
  { path: 'settings/rate-limits', nav: 'config.nav.rateLimits', permission: 'config.manage', render: () => createElement(RateLimitsScreen) },
  { path: 'settings/keys', nav: 'config.nav.keys', permission: 'config.manage', render: () => createElement(KeysScreen) },
  { path: 'alerts', nav: 'alerts.nav', permission: 'alerts.manage', render: () => createElement(AlertsScreen) },
  { path: 'alerts/:id', permission: 'alerts.manage', render: ({ id }) => createElement(AlertScreen, { id: id! }) },
];
