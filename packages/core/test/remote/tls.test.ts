import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { EndpointUnavailableError, type HandshakeError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import type { RemoteTlsOptions } from '../../src/remote/remote-options';
import type { TestNode } from './helpers';
import { helloFrame, rawConnect, rejectionOf, startNode, stopNodes } from './helpers';

interface Pki {
  ca: string;
  cert: string;
  key: string;
  rogueCert: string;
  rogueKey: string;
  /** Same CA, names only member id `member-7`. */
  memberCert: string;
  memberKey: string;
  /** Same CA, names only `elsewhere.example`. */
  elsewhereCert: string;
  elsewhereKey: string;
}

/**
 * A throwaway CA and node certificate (SAN 127.0.0.1, localhost), one from another CA, and two
 * more of the CA that name neither loopback host: one a member id, one another host.
 */
function makePki(dir: string): Pki {
  const run = (...args: string[]): void =>
    void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  fs.writeFileSync(path.join(dir, 'member.ext'), 'subjectAltName=DNS:member-7\n');
  fs.writeFileSync(path.join(dir, 'elsewhere.ext'), 'subjectAltName=DNS:elsewhere.example\n');
  for (const name of ['ca', 'rogue-ca']) {
    run(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    );
  }
  for (const [name, ca, ext, cn] of [
    ['node', 'ca', 'san.ext', 'localhost'],
    ['rogue', 'rogue-ca', 'san.ext', 'localhost'],
    ['member', 'ca', 'member.ext', 'member-7'],
    ['elsewhere', 'ca', 'elsewhere.ext', 'elsewhere.example'],
  ]) {
    run('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      ext!,
    );
  }
  const read = (f: string): string => fs.readFileSync(path.join(dir, f), 'utf8');
  return {
    ca: read('ca.crt'),
    cert: read('node.crt'),
    key: read('node.key'),
    rogueCert: read('rogue.crt'),
    rogueKey: read('rogue.key'),
    memberCert: read('member.crt'),
    memberKey: read('member.key'),
    elsewhereCert: read('elsewhere.crt'),
    elsewhereKey: read('elsewhere.key'),
  };
}

describe('Remote TLS', function () {
  this.timeout(20000);
  const nodes: TestNode[] = [];
  let dir: string;
  let pki: Pki;
  const echo = Props.fromFunc((ctx) => {
    if (ctx.sender) ctx.respond(ctx.message);
  });

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'granary-tls-'));
    pki = makePki(dir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(() => stopNodes(nodes));

  async function node(tls: RemoteTlsOptions | undefined): Promise<TestNode> {
    const n = await startNode({ tls, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    nodes.push(n);
    return n;
  }

  it('talks over TLS when both nodes have certificates of the same CA', async () => {
    const tls = { ca: pki.ca, cert: pki.cert, key: pki.key, serverNameOverride: 'localhost' };
    const a = await node(tls);
    const b = await node(tls);
    b.system.root.spawnNamed(echo, 'echo');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'secure', { timeoutMs: 5000 }),
    ).to.equal('secure');
  });

  it('talks over mutual TLS when the client presents a certificate of the CA', async () => {
    const mtls = {
      ca: pki.ca,
      cert: pki.cert,
      key: pki.key,
      requireClientCert: true,
      serverNameOverride: 'localhost',
    };
    const a = await node(mtls);
    const b = await node(mtls);
    b.system.root.spawnNamed(echo, 'echo');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'mutual', { timeoutMs: 5000 }),
    ).to.equal('mutual');
  });

  it('accepts under mutual TLS a client whose certificate names its member id', async () => {
    const server = {
      ca: pki.ca,
      cert: pki.cert,
      key: pki.key,
      requireClientCert: true,
      serverNameOverride: 'localhost',
    };
    const b = await node(server);
    b.system.root.spawnNamed(echo, 'echo');
    const a = await startNode({
      memberId: 'member-7',
      tls: { ...server, cert: pki.memberCert, key: pki.memberKey },
    });
    nodes.push(a);
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'named', { timeoutMs: 5000 }),
    ).to.equal('named');
  });

  describe('refuses under mutual TLS', () => {
    let b: TestNode;
    let delivered: number;

    beforeEach(async () => {
      delivered = 0;
      b = await node({
        ca: pki.ca,
        cert: pki.cert,
        key: pki.key,
        requireClientCert: true,
        serverNameOverride: 'localhost',
      });
      b.system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'string') delivered++;
          if (ctx.sender) ctx.respond(ctx.message);
        }),
        'echo',
      );
    });

    it('a peer without a client certificate', async () => {
      const raw = rawConnect(b.address, grpc.credentials.createSsl(Buffer.from(pki.ca)), {
        'grpc.ssl_target_name_override': 'localhost',
      });
      raw.send(helloFrame({ memberId: 'x' }));
      const status = await raw.ended;
      raw.close();
      expect(status.code).to.equal(grpc.status.UNAVAILABLE);
      expect(raw.frames).to.have.length(0);
      expect(b.remote.stats.refusedHandshakes).to.equal(0);
    });

    const cases: Array<[string, () => RemoteTlsOptions | undefined]> = [
      [
        'a peer whose certificate another CA signed',
        () => ({
          ca: pki.ca,
          cert: pki.rogueCert,
          key: pki.rogueKey,
          serverNameOverride: 'localhost',
        }),
      ],
      ['a plaintext peer', () => undefined],
      [
        'a peer whose certificate of the CA covers neither its address nor its member id',
        () => ({
          ca: pki.ca,
          cert: pki.elsewhereCert,
          key: pki.elsewhereKey,
          serverNameOverride: 'localhost',
        }),
      ],
    ];
    for (const [name, tls] of cases) {
      it(name, async () => {
        const a = await startNode({ tls: tls() });
        nodes.push(a);
        const err = await rejectionOf(
          a.system.root.request(new PID(b.address, 'echo'), 'let me in', { timeoutMs: 10000 }),
        );
        expect(err).to.be.instanceOf(EndpointUnavailableError);
        expect(delivered).to.equal(0);
      });
    }

    it('names the certificate in the refusal of an uncovered identity', async () => {
      const a = await startNode({
        tls: {
          ca: pki.ca,
          cert: pki.elsewhereCert,
          key: pki.elsewhereKey,
          serverNameOverride: 'localhost',
        },
      });
      nodes.push(a);
      const err = await rejectionOf(
        a.system.root.request(new PID(b.address, 'echo'), 'x', { timeoutMs: 10000 }),
      );
      expect(((err as Error).cause as HandshakeError).refusal).to.equal('certificate');
      expect(b.remote.stats.refusedHandshakes).to.equal(1);
    });
  });
});
