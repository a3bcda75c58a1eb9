import { expect } from 'chai';

/**
 * `text` (granary-codegen's error output) with each `file.proto:line:column: ` written as
 * `file.proto:line: `, for tests about the line and the message; fails the test when a location
 * has a line and no column (every location names both, as protoc's do). The columns themselves
 * are checked in parse-errors.test.
 */
export function linesOnly(text: string): string {
  expect(text, 'a location without a column').to.not.match(/\.proto:\d+: /);
  return text.replace(/(\.proto:\d+):\d+: /g, '$1: ');
}
