import { mountEntry } from '../ui/Entry.js';
import { CONSOLE_SCREENS } from './screens.js';

mountEntry('/console', { title: 'console.title', screens: CONSOLE_SCREENS, fallback: 'console.nothing' });
