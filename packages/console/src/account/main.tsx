import { createElement } from 'react';
import { installTrustedTypesPolicy } from '../lib/trusted-types.js';
import { mountEntry } from '../ui/Entry.js';
import { ErasureGate } from './your-data/ErasurePending.js';
import { ACCOUNT_SCREENS } from './screens.js';

installTrustedTypesPolicy();
// Signed out after asking for the account's deletion, the page shows that request instead of the sign-in form.
mountEntry('/account', { title: 'account.title', screens: ACCOUNT_SCREENS, fallback: 'account.notFound', signedOut: (signIn) => createElement(ErasureGate, { signIn }) });
