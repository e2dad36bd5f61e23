/**
 * The operator console and the account pages in the browser (packages/console, built into
 * dist/console): served by the service itself, under a strict Content-Security-Policy
 * (docs/console.md). Everything they do goes through the public API, as any client would.
 */
import type { Logger } from 'pino';
import type { Module } from '../platform/module.js';
import { defaultConsoleDir, loadConsoleBuild } from './files.js';
import { consoleRoutes } from './routes.js';

export interface ConsoleDeps {
  log: Logger;
}

export function consoleModule(deps: ConsoleDeps): Module {
  const build = loadConsoleBuild(defaultConsoleDir());
  if (!build.pages) deps.log.warn({ dir: build.dir }, 'the console is not built: /console and /account say so (npm start builds it)');
  return { name: 'console', provides: {}, routes: consoleRoutes(build) };
}
