// Lint rules, including the layer rule of the README's Architecture section:
// main → http | workers | cli → services → caches | infrastructure → store | platform → lib;
// only config/ reads the environment.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const layers = {
  lib: ['config', 'store', 'platform', 'caches', 'infrastructure', 'services', 'http', 'workers', 'cli', 'main'],
  config: ['store', 'platform', 'caches', 'infrastructure', 'services', 'http', 'workers', 'cli', 'main'],
  store: ['platform', 'caches', 'infrastructure', 'services', 'http', 'workers', 'cli', 'main'],
  platform: ['store', 'caches', 'infrastructure', 'services', 'http', 'workers', 'cli', 'main'],
  caches: ['infrastructure', 'services', 'http', 'workers', 'cli', 'main'],
  infrastructure: ['caches', 'services', 'http', 'workers', 'cli', 'main'],
  services: ['http', 'workers', 'cli', 'main'],
  http: ['store', 'platform', 'infrastructure', 'workers', 'cli', 'main'],
  workers: ['http', 'cli', 'main'],
  cli: ['http', 'workers', 'main', 'store'],
};

/** Packages a layer may not use: the web framework stays in http/, SQL stays in store/ (and migrations). */
const forbiddenPackages = {
  services: ['fastify', '@fastify/*'],
  caches: ['fastify', '@fastify/*'],
  infrastructure: ['fastify', '@fastify/*'],
  http: ['kysely', 'pg', 'better-sqlite3'],
  workers: ['fastify', '@fastify/*'],
};

/** Exceptions to the layers: `tms admin` prints through the same presenters as /admin/v1, so its JSON is the API's. */
const allowedImports = {
  cli: { http: ['!**/http/presenters'] },
};

function forbidLayers(layer, forbidden) {
  const packages = forbiddenPackages[layer] ?? [];
  const allowed = allowedImports[layer] ?? {};
  return {
    files: [`packages/gateway/src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          ...forbidden.map((other) => ({
            group: allowed[other] ? [`**/${other}/*`, ...allowed[other]] : [`**/${other}/*`, `../${other}`, `../../${other}`, '!./routes/**'],
            message: `${layer}/ may not import ${other}/ (see the README, Architecture).`,
          })),
          ...(packages.length > 0 ? [{ group: packages, message: `${layer}/ may not use ${packages.join(', ')} (see the README, Architecture).` }] : []),
        ],
      }],
    },
  };
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.tms/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', {
        selector: "MemberExpression[object.name='process'][property.name='env']",
        message: 'Only src/config reads process.env.',
      }],
    },
  },
  ...Object.entries(layers).map(([layer, forbidden]) => forbidLayers(layer, forbidden)),
  {
    // The simulator is an external system to the gateway (README, Architecture): it may import nothing of ours.
    files: ['packages/zns-sim/**/*.ts', 'packages/zns-sim/**/*.js'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['**/gateway', '**/gateway/**', '**/client', '**/client/**', '@tms/gateway', '@tms/gateway/**', '@tms/client', '@tms/client/**'],
          message: 'packages/zns-sim may not import anything from packages/gateway or packages/client (it is an external system; see the README, Architecture).',
        }],
      }],
    },
  },
  {
    // The SDK speaks the public contract only (README, Architecture): its tests run the gateway and the simulator as processes.
    files: ['packages/client/**/*.ts', 'packages/client/**/*.js'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['**/gateway', '**/gateway/**', '**/zns-sim', '**/zns-sim/**', '@tms/gateway', '@tms/gateway/**', '@tms/zns-sim', '@tms/zns-sim/**'],
          message: 'packages/client may not import anything from packages/gateway or packages/zns-sim (it speaks the public contract only; see the README, Architecture).',
        }],
      }],
    },
  },
  {
    // The console is browser code: React's rules of hooks, and nothing from the other packages (it speaks /console/api only).
    files: ['packages/console/src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat['recommended-latest'],
  },
  {
    files: ['packages/console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['@tms/*', 'node:*', '../../*/src/**', '../../../*/src/**', '**/gateway/**', '**/zns-sim/**'],
          message: 'packages/console/src is a browser app: it may import nothing from the other packages or Node.js (it speaks /console/api only).',
        }],
      }],
    },
  },
  {
    files: ['packages/gateway/src/config/**/*.ts', '**/test/**/*.ts', '**/*.test.ts', '**/bench/**/*.ts', 'vitest.config.ts', '**/bin/*.js', 'scripts/*.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/test/**/*.ts', '**/*.test.ts', '**/bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
