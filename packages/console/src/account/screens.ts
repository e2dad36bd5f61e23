/**
 * The account pages' screens, in navigation order: one file and one entry each (path under
 * /account, navigation label). Every action goes through the same public routes as the bank's
 * apps, for the signed-in person only.
 */
import { createElement } from 'react';
import type { Screen } from '../lib/router.js';
import { ConsentScreen } from './ConsentScreen.js';
import { ContactsScreen } from './ContactsScreen.js';
import { DataScreen } from './your-data/DataScreen.js';
import { DevicesScreen } from './DevicesScreen.js';
import { ProfileScreen } from './ProfileScreen.js';
import { RecoveryScreen } from './RecoveryScreen.js';
import { SessionsScreen } from './SessionsScreen.js';
import { FactorsScreen } from './security/FactorsScreen.js';
import { PasswordScreen } from './security/PasswordScreen.js';

export const ACCOUNT_SCREENS: readonly Screen[] = [
  { path: 'profile', nav: 'nav.profile', render: () => createElement(ProfileScreen) },
  { path: 'sessions', nav: 'nav.sessions', render: () => createElement(SessionsScreen) },
  { path: 'security/password', nav: 'security.navPassword', render: () => createElement(PasswordScreen) },
  { path: 'security/factors', nav: 'security.navFactors', render: () => createElement(FactorsScreen) },
  { path: 'contacts', nav: 'account.navContacts', render: () => createElement(ContactsScreen) },
  { path: 'devices', nav: 'account.navDevices', render: () => createElement(DevicesScreen) },
  { path: 'consent', nav: 'account.navConsent', render: () => createElement(ConsentScreen) },
  { path: 'data', nav: 'account.navData', render: () => createElement(DataScreen) },
  { path: 'recovery', nav: 'account.navRecovery', render: () => createElement(RecoveryScreen) },
];
