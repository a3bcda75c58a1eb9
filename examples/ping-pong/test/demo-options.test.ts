import { expect } from 'chai';
import { DEFAULT_DEMO_OPTIONS, parseDemoOptions } from '../src/demo/demo-options';
import { DemoOptionError } from '../src/errors';

function optionError(argv: string[]): DemoOptionError {
  try {
    parseDemoOptions(argv);
  } catch (err) {
    expect(err).to.be.instanceOf(DemoOptionError);
    return err as DemoOptionError;
  }
  throw new Error(`parseDemoOptions(${argv.join(' ')}) did not throw`);
}

describe('parseDemoOptions', () => {
  it('defaults to 20 s with the seed provider and no kill', () => {
    expect(parseDemoOptions([])).to.deep.equal(DEFAULT_DEMO_OPTIONS);
    expect(DEFAULT_DEMO_OPTIONS).to.include({
      seconds: 20,
      provider: 'seed',
      killAfter: undefined,
      redis: 'auto',
    });
  });

  it('reads --seconds, --kill-after, --provider etcd and --etcd (both flag forms)', () => {
    expect(
      parseDemoOptions([
        '--seconds',
        '30',
        '--kill-after=5',
        '--provider',
        'etcd',
        '--etcd',
        'http://127.0.0.1:2379',
      ]),
    ).to.deep.equal({
      seconds: 30,
      killAfter: 5,
      provider: 'etcd',
      etcd: ['http://127.0.0.1:2379'],
      redis: 'auto',
    });
    expect(parseDemoOptions(['--redis', 'off']).redis).to.equal('off');
    expect(parseDemoOptions(['--redis=redis://10.0.0.1:6379']).redis).to.equal(
      'redis://10.0.0.1:6379',
    );
  });

  it('names the option at fault', () => {
    expect(optionError(['--seconds', '-1']).option).to.equal('--seconds');
    expect(optionError(['--seconds']).option).to.equal('--seconds');
    expect(optionError(['--provider', 'consul']).option).to.equal('--provider');
    expect(optionError(['--redis', 'localhost:6379']).option).to.equal('--redis');
    expect(optionError(['--provider', 'etcd']).option).to.equal('--etcd');
    expect(optionError(['--etcd', 'http://x:2379']).option).to.equal('--etcd');
    expect(optionError(['--kill-after', '25']).option).to.equal('--kill-after');
    const unknown = optionError(['--verbose']);
    expect(unknown.option).to.equal('--verbose');
    expect(unknown.code).to.equal('ERR_DEMO_OPTION');
    expect(unknown.message).to.include('usage: npm run demo');
  });
});
