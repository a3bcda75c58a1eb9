import { expect } from 'chai';
import { createNodeLogger } from '../src/log';

/** Lines written by the example's logger, kept in memory. */
function capture(): { lines: string[]; log: ReturnType<typeof createNodeLogger> } {
  const lines: string[] = [];
  return { lines, log: createNodeLogger('info', {}, (line) => lines.push(line)) };
}

// eslint-disable-next-line no-control-regex -- no control character may reach a line
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202e]/;

describe('createNodeLogger', () => {
  it('writes key=value fields, quoting values with spaces', () => {
    const { lines, log } = capture();
    log.info({ cnt: 3, err: new Error('no route') }, 'pong');
    expect(lines[0]).to.match(/^\d\d:\d\d:\d\d\.\d{3} info {2}pong cnt=3 err="Error: no route"$/);
  });

  it('escapes terminal controls in values and in the message: one line, no escape sequence', () => {
    const { lines, log } = capture();
    // A grain identity a caller chose: retitles the terminal, clears it, forges a line.
    const grain = 'messages.Ponger/p\x1b]0;owned\x07\x1b[2J\rFORGED\u202e\x9b31m';
    log.info({ grain }, 'activated');
    log.warn({ err: new Error('peer said\nFORGED line') }, 'refused: \x1b[31mred\x1b[0m\nFORGED');
    expect(lines).to.have.length(2);
    for (const line of lines) {
      expect(line).to.not.match(CONTROL);
      expect(line).to.not.contain('\n');
    }
    const quoted = /grain=("(?:[^"\\]|\\.)*")/.exec(lines[0]!)?.[1];
    expect(JSON.parse(quoted!), 'the value reads back').to.equal(grain);
    expect(lines[1]).to.contain('refused: \\u001b[31mred\\u001b[0m\\u000aFORGED');
  });
});
