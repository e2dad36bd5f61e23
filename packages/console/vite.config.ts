/**
 * The operator console (/console) and the account pages (/account): two HTML entries sharing
 * one component set, built to dist/console with hashed file names (scripts/build-if-changed.mjs
 * runs this build for `npm start` and the test harness). Nothing inline: the pages run under a
 * Content-Security-Policy without 'unsafe-inline' (docs/console.md).
 */
import path from 'node:path';
import optimizeLocales from '@react-aria/optimize-locales-plugin';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = import.meta.dirname;

export default defineConfig({
  root,
  base: '/console/',
  // React Aria's own strings: only the pages' three languages (src/lib/i18n.tsx ARIA_LOCALES).
  plugins: [react(), optimizeLocales.vite({ locales: ['en-US', 'pt-PT', 'fr-FR'] })],
  logLevel: 'warn',
  clearScreen: false,
  build: {
    outDir: path.resolve(root, '../../dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill is an inline script; every browser the pages support has modulepreload.
    modulePreload: { polyfill: false },
    // Nothing turned into data: URLs or inline styles: every asset is a file under 'self'.
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      input: { console: path.resolve(root, 'index.html'), account: path.resolve(root, 'account.html') },
      // The code both entries share is one chunk, named for what it is.
      output: { chunkFileNames: 'assets/shared-[hash].js' },
    },
  },
});
