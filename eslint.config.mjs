import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'bench/results/**',
      '**/test/golden/**',
      '**/gen/**',
      '**/*.granary.ts',
      // Sources of an app built outside the workspace by packed-app.test (its own tsconfig).
      'examples/ping-pong/test/packed-app/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // What verbatimModuleSyntax would check, for packages emitted as CommonJS, where
      // TypeScript forbids that flag with import/export syntax (TS1286/TS1287/TS1295): an import
      // used only as a type says so, so it is erased and never loads a module for nothing, and
      // `import { type A }` (all inline types) is written `import type { A }`. tsconfig's
      // isolatedModules adds the rest (type re-exports as `export type`).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // `.only` in a committed test hides the rest of the suite (mocha's forbidOnly also fails the run).
      'no-restricted-properties': [
        'error',
        { object: 'describe', property: 'only', message: 'remove .only' },
        { object: 'it', property: 'only', message: 'remove .only' },
        { object: 'context', property: 'only', message: 'remove .only' },
      ],
    },
  },
  {
    // The admin dashboard: plain browser JavaScript served as is (no build step).
    files: ['packages/admin/dashboard/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        sessionStorage: 'readonly',
        TextDecoder: 'readonly',
        uPlot: 'readonly',
      },
    },
  },
  {
    files: ['packages/*/src/**/*.ts'],
    rules: {
      // Library code logs through the injected logger, never the console.
      'no-console': 'error',
    },
  },
  {
    files: ['packages/*/src/**/*.ts', 'examples/*/src/**/*.ts'],
    ignores: ['packages/core/src/granary-error.ts'],
    rules: {
      // One error hierarchy (CHANGELOG): every error class has a fixed name, a static code and is().
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ClassDeclaration[superClass.name=/^(Error|TypeError|RangeError)$/]',
          message:
            "Extend core's GranaryError (or the package's base error) and declare a static code.",
        },
      ],
    },
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
