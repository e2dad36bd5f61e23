import { installTrustedTypesPolicy } from '../lib/trusted-types.js';
import { mountEntry } from '../ui/Entry.js';
import { ACCOUNT_SCREENS } from './screens.js';

installTrustedTypesPolicy();
mountEntry('/account', { title: 'account.title', screens: ACCOUNT_SCREENS, fallback: 'account.notFound' });
