/** The package version, kept equal to package.json by a test (lerna bumps both). */
export const VERSION = '0.1.0';
