import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE = join(__dirname, '../..');
const INDEX = join(PACKAGE, 'dist/src/index.js');

/**
 * Runs `body` in a fresh node where every `@opentelemetry/sdk-*` module is missing, as in a
 * user's project that installs the testkit without the SDK (an optional peer dependency).
 */
function withoutSdk(body: string): string {
  const script = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request.startsWith('@opentelemetry/sdk-')) {
        const e = new Error('Cannot find module ' + request); e.code = 'MODULE_NOT_FOUND'; throw e;
      }
      return resolve.call(this, request, ...rest);
    };
    ${body}`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
}

describe('package entry points', () => {
  it('the index loads without the OpenTelemetry SDK and loads none of it', () => {
    const out = withoutSdk(`
      const kit = require(${JSON.stringify(INDEX)});
      const sdk = Object.keys(require.cache).filter((p) =>
        /@opentelemetry[\\/](sdk-|core|resources)/.test(p),
      );
      console.log(JSON.stringify({ start: typeof kit.TestCluster.start, sdk }));`);
    expect(JSON.parse(out)).to.deep.equal({ start: 'function', sdk: [] });
  });

  it('the telemetry subpath gives the SDK set-ups of the benchmarks', async () => {
    const { benchTelemetry } = await import('@granary/testkit/telemetry');
    const none = benchTelemetry('none');
    expect(none.options).to.deep.equal({});
    const metrics = benchTelemetry('metrics', 'n1');
    try {
      expect(metrics.options.meterProvider).to.not.equal(undefined);
    } finally {
      await metrics.shutdown();
    }
  });

  it('package.json exports the subpath and lists the SDK as optional peers', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string } | string>;
      peerDependenciesMeta: Record<string, { optional: boolean }>;
    };
    expect(pkg.exports['./telemetry']).to.deep.include({ default: './dist/src/telemetry.js' });
    for (const name of ['@opentelemetry/sdk-metrics', '@opentelemetry/sdk-trace-base']) {
      expect(pkg.peerDependenciesMeta[name], name).to.deep.equal({ optional: true });
    }
  });
});
