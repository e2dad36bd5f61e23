import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'node_modules/**', 'data/**', 'coverage/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Capability modules never reach the composition root: what they need comes in through their factory.
    files: ['src/*/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+app(\\.js)?$', message: 'A capability receives its dependencies through its module factory; it never imports src/app.ts.' }] }],
    },
  },
  {
    // The console's React components: the rules of hooks (packages/console).
    files: ['packages/console/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    files: ['src/cli.ts', 'bench/**', 'test/**', 'packages/*/test/**', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Plain Node.js scripts that run before the TypeScript is compiled (npm start's build check,
    // the test command's second Node.js pass): command-line tools that talk on the console.
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: { 'no-console': 'off' },
  },
);
