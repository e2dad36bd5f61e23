import { mountEntry } from '../ui/Entry.js';
import { ACCOUNT_SCREENS } from './screens.js';

mountEntry('/account', { title: 'account.title', screens: ACCOUNT_SCREENS, fallback: 'account.notFound' });
