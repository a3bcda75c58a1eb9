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
    files: ['packages/*/src/**/*.ts'],
    rules: {
      // Library code logs through the injected logger, never the console.
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
