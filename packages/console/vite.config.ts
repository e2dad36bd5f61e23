/**
 * The operator console (/console) and the account pages (/account): two HTML entries sharing
 * one component set, built to dist/console with hashed file names (scripts/build-if-changed.mjs
 * runs this build for `npm start` and the test harness). Nothing inline: the pages run under a
 * Content-Security-Policy without 'unsafe-inline' (docs/console.md).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import optimizeLocales from '@react-aria/optimize-locales-plugin';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = import.meta.dirname;

/**
 * Each script, stylesheet and icon also written compressed (`<name>.br`, `<name>.gz`), once at
 * build time: the server sends the form the browser accepts without compressing per request
 * (the shared script: 790 kB, 190 kB as Brotli at its best setting, which takes a second).
 */
function precompress(): Plugin {
  return {
    name: 'strongroom-precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      for (const [name, file] of Object.entries(bundle)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const bytes = Buffer.from(file.type === 'chunk' ? file.code : file.source);
        const out = path.join(options.dir!, name);
        writeFileSync(`${out}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
        writeFileSync(`${out}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/console/',
  // React Aria's own strings: only the pages' three languages (src/lib/i18n.tsx ARIA_LOCALES).
  plugins: [react(), optimizeLocales.vite({ locales: ['en-US', 'pt-PT', 'fr-FR'] }), precompress()],
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
    chunkSizeWarningLimit: 800,
    rolldownOptions: {
      input: { console: path.resolve(root, 'index.html'), account: path.resolve(root, 'account.html') },
      // The code both entries share is one chunk, named for what it is.
      output: { chunkFileNames: 'assets/shared-[hash].js' },
    },
  },
});
