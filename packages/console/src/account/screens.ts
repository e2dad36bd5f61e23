/**
 * The account pages' screens, in navigation order: one file and one entry each (path under
 * /account, navigation label). Every action goes through the same public routes as the bank's
 * apps, for the signed-in person only.
 */
import { createElement } from 'react';
import type { Screen } from '../lib/router.js';
import { ProfileScreen } from './ProfileScreen.js';
import { SessionsScreen } from './SessionsScreen.js';
import { FactorsScreen } from './security/FactorsScreen.js';
import { PasswordScreen } from './security/PasswordScreen.js';

export const ACCOUNT_SCREENS: readonly Screen[] = [
  { path: 'profile', nav: 'nav.profile', render: () => createElement(ProfileScreen) },
  { path: 'sessions', nav: 'nav.sessions', render: () => createElement(SessionsScreen) },
  { path: 'security/password', nav: 'security.navPassword', render: () => createElement(PasswordScreen) },
  { path: 'security/factors', nav: 'security.navFactors', render: () => createElement(FactorsScreen) },
];
