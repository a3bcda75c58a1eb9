import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as protobuf from 'protobufjs';
import { freePort } from '@granary/testkit';
import { call } from '../src/cli/call';
import { CliExit, EXIT } from '../src/cli/exit-codes';

const PROTO = join(__dirname, '..', '..', 'test', 'protos', 'admin-json.proto');

/**
 * `granary call` encodes the request from --json with protobufjs' fromObject, which turned a
 * value of the wrong JSON type into another value without a word ("false" for a bool into true,
 * "abc" for a double into NaN, 1.5 for an int64 into 1, 5 for a string into "5") and sent it to
 * the grain. The checks run before any request: the target is a closed port, so a request that
 * passes them ends unreachable (exit 3), and one refused ends as usage (exit 2).
 */
describe('granary call: --json values of the wrong type', function () {
  this.timeout(20_000);
  let url: string;

  before(async () => {
    url = `http://127.0.0.1:${await freePort()}`;
  });

  /** The exit of `call` with `json`: its code and message. */
  async function exitOf(json: unknown): Promise<{ code: number; message: string }> {
    const target = { url, token: 't', timeoutMs: 2000 };
    try {
      await call(target, 'adminjson.Probe', 'p', 'Send', JSON.stringify(json), [PROTO], [], false);
    } catch (err) {
      if (err instanceof CliExit) return { code: err.exitCode, message: err.message };
      throw err;
    }
    throw new Error('call succeeded against a closed port');
  }

  const refused: Array<[string, unknown, RegExp]> = [
    ['a string for a bool', { on: 'false' }, /on must be true or false/],
    ['a word for a double', { ratio: 'abc' }, /ratio must be a number/],
    ['a fraction for an int64', { big: 1.5 }, /big must be an integer/],
    ['a fraction in a string for an int64', { big: '1.5' }, /big must be an integer/],
    ['a number for a string', { name: 5 }, /name must be a string/],
    ['an int32 out of range', { small: 2 ** 31 }, /small is out of range for int32/],
    ['a negative uint32', { count: -1 }, /count is out of range for uint32/],
    ['a uint64 past 2^64-1', { ubig: '18446744073709551616' }, /out of range for uint64/],
    ['an unknown enum name', { mode: 'MODE_OFF' }, /mode must be a value of Mode/],
    ['an object for a number', { ratio: { v: 1 } }, /ratio must be a number/],
    ['a list item of the wrong type', { list: [1, 'x'] }, /list\[1\] must be an integer/],
    ['a map key not of its key type', { byId: { x: 'a' } }, /byId key "x" is not a int32/],
    ['a map value of the wrong type', { gauges: { t: 'hot' } }, /gauges\["t"\] must be a number/],
    [
      'a nested field of the wrong type',
      { inner: { label: true } },
      /inner.label must be a string/,
    ],
    ['bytes that are not base64', { blob: 'not base64!' }, /blob must be base64/],
    ['a field by both its names', { by_id: {}, byId: {} }, /byId is given twice/],
  ];
  for (const [what, json, message] of refused) {
    it(`refuses ${what} as usage, naming the field`, async () => {
      const exit = await exitOf(json);
      expect(exit.code, exit.message).to.equal(EXIT.usage);
      expect(exit.message).to.match(/--json does not fit adminjson.Everything/);
      expect(exit.message).to.match(message);
    });
  }

  it('takes every proto3 JSON form of the values (and goes on to the call)', async () => {
    const exit = await exitOf({
      name: 'n',
      on: false,
      ratio: '1.5e3',
      small: '-7',
      count: 4294967295,
      big: '-9223372036854775808',
      ubig: '18446744073709551615',
      blob: 'AQI=',
      mode: 1,
      inner: { label: 'x' },
      list: [1, '2'],
      by_id: { '-1': 'a' }, // the proto name, which proto3 JSON accepts beside byId
      gauges: { t: 'NaN', u: 2.5 },
    });
    expect(exit.code, exit.message).to.equal(EXIT.unreachable);
  });

  it('sends the values written, a field named by its proto name included', async () => {
    let body = '';
    const server = createServer((req, res) => {
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => res.end(JSON.stringify({ payload: '' })));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const target = {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        token: 't',
        timeoutMs: 2000,
      };
      const json = '{"by_id":{"7":"seven"},"inner":{"label":"x"},"big":"-5","on":true}';
      await call(target, 'adminjson.Probe', 'p', 'Send', json, [PROTO], [], false);
    } finally {
      server.close();
    }
    const type = (await protobuf.load(PROTO)).lookupType('adminjson.Everything');
    const sent = type.toObject(
      type.decode(Buffer.from((JSON.parse(body) as { payload: string }).payload, 'base64')),
      { longs: String },
    );
    expect(sent).to.deep.equal({
      byId: { 7: 'seven' },
      inner: { label: 'x' },
      big: '-5',
      on: true,
    });
  });
});
