import { installTrustedTypesPolicy } from '../lib/trusted-types.js';
import { mountEntry } from '../ui/Entry.js';
import { CONSOLE_SCREENS } from './screens.js';

installTrustedTypesPolicy();
mountEntry('/console', { title: 'console.title', screens: CONSOLE_SCREENS, fallback: 'console.nothing' });
