import { expect } from 'chai';
import {
  InvalidArgumentError,
  NameExistsError,
  PID,
  Props,
  Watch,
  type ActorSystem,
} from '@granary/core';
import {
  entryHeader,
  entryMessage,
  entryOf,
  entrySender,
  type Entry,
  type LocalProcess,
  type Process,
} from '../src/internal';
import { testSystem } from './support';

/** What a RecordingProcess was posted: the entry read back with core's readers. */
interface Posted {
  message: unknown;
  sender: PID | undefined;
  header: Record<string, string> | undefined;
  urgent: boolean;
}

/** A stand-in for remoting: records what it is asked to deliver. */
class RecordingProcess implements Process {
  user: [PID, Posted][] = [];
  system: [PID, unknown][] = [];
  post(pid: PID, entry: Entry, urgent: boolean): boolean {
    const posted = {
      message: entryMessage(entry),
      sender: entrySender(entry),
      header: entryHeader(entry),
      urgent,
    };
    this.user.push([pid, posted]);
    return true;
  }
  sendSystemMessage(pid: PID, message: unknown): void {
    this.system.push([pid, message]);
  }
  stop(pid: PID): void {
    this.system.push([pid, 'stop']);
  }
}

describe('ProcessRegistry', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  describe('prefix routes', () => {
    it('hand every unregistered local id under the prefix to one process, with its PID', () => {
      const route = new RecordingProcess();
      system.registry.addPrefix('$grains/counter/', route);
      const pid = new PID(system.address, '$grains/counter/c-1');
      system.root.send(pid, 'inc', { header: { trace: 't' } });
      system.root.send(pid, 'inc');
      expect(route.user.map(([p, e]) => [p.id, e.message, e.header])).to.deep.equal([
        ['$grains/counter/c-1', 'inc', { trace: 't' }],
        ['$grains/counter/c-1', 'inc', undefined],
      ]);
      // Not a LocalProcess of this registry: never cached on the PID.
      expect(pid._p).to.equal(undefined);
    });

    it('leave registered ids and other prefixes alone, and stop at removePrefix', async () => {
      const route = new RecordingProcess();
      system.registry.addPrefix('$grains/counter/', route);
      const exact = system.root.spawnNamed(
        Props.fromFunc((ctx) => ctx.sender && ctx.respond('exact')),
        '$grains/counter/own',
      );
      expect(await system.root.request(exact, 'q')).to.equal('exact');
      expect(system.registry.getLocal('$grains/other/x')).to.equal(undefined);
      system.registry.removePrefix('$grains/counter/');
      expect(system.registry.getLocal('$grains/counter/c-1')).to.equal(undefined);
      expect(route.user).to.have.length(0);
    });

    it('cache a local process of this registry on the PIDs it takes (post gets the id)', () => {
      const ids: string[] = [];
      const local: LocalProcess = {
        owner: system.registry,
        dead: false,
        capacity: Infinity,
        post: (pid) => ids.push(pid.id) > 0,
        sendSystemMessage: () => {},
        stop: () => {},
      };
      system.registry.addPrefix('$grains/k/', local);
      const a = new PID(system.address, '$grains/k/a');
      system.root.send(a, 'one');
      expect(a._p).to.equal(local);
      system.root.send(a, 'two');
      system.root.send(new PID(system.address, '$grains/k/b'), 'three');
      expect(ids).to.deep.equal(['$grains/k/a', '$grains/k/a', '$grains/k/b']);
    });

    it('reject a taken or invalid prefix', () => {
      system.registry.addPrefix('$grains/a/', new RecordingProcess());
      expect(() => system.registry.addPrefix('$grains/a/', new RecordingProcess())).to.throw(
        NameExistsError,
      );
      expect(() => system.registry.addPrefix('', new RecordingProcess())).to.throw(
        InvalidArgumentError,
      );
    });
  });

  it('routes PIDs of another address through the first resolver that answers', async () => {
    const remote = new RecordingProcess();
    system.registry.addAddressResolver(() => undefined);
    system.registry.addAddressResolver((pid) => (pid.address === 'h:1' ? remote : undefined));
    const target = new PID('h:1', 'ponger');
    system.root.send(target, 'hi', { header: { a: 'b' }, priority: 'urgent' });
    const watcher = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message !== 'watch') return;
        ctx.watch(target);
        ctx.respond('watching');
      }),
    );
    await system.root.request(watcher, 'watch');
    expect(remote.user).to.have.length(1);
    expect(remote.user[0]![1]).to.deep.include({ message: 'hi', urgent: true });
    expect(remote.user[0]![1].header).to.deep.equal({ a: 'b' });
    expect(remote.system[0]![1]).to.be.instanceOf(Watch);
  });

  it('gives a request to a remote PID a future sender that a reply by its whole id resolves', async () => {
    const remote = new RecordingProcess();
    system.registry.addAddressResolver(() => remote);
    const pending = system.root.request(new PID('h:2', 'x'), 'q');
    const sender = remote.user[0]![1].sender!;
    expect(sender.id).to.match(/^f\$[\w-]{10}$/);
    // Its slot alone, another token, or a near miss names nothing: the id is a capability.
    const slot = sender.id.slice(0, 4);
    const guesses = [slot, `${slot}AAAAAAAA`, `${sender.id}x`, sender.id.slice(0, -1)];
    guesses.push(`${sender.id.slice(0, -1)}${sender.id.endsWith('A') ? 'B' : 'A'}`);
    for (const guess of guesses) {
      expect(system.registry.get(new PID(sender.address, guess))).to.not.equal(
        system.registry.getLocal(sender.id),
      );
      expect(system.registry.getLocal(guess)).to.equal(undefined);
    }
    // A reply arriving from the network names the future by address and id only.
    const fromWire = new PID(sender.address, sender.id);
    system.registry.get(fromWire).post(fromWire, entryOf('answer'), false);
    expect(await pending).to.equal('answer');
  });

  it('finds futures past the slot table by their whole id, and forgets them when settled', async () => {
    const remote = new RecordingProcess();
    system.registry.addAddressResolver(() => remote);
    const before = system.registry.size;
    // Over 4,096 pending: later requests share slots with earlier ones (the overflow map).
    const pending = Array.from({ length: 5000 }, (_, i) =>
      system.root.request(new PID('h:2', 'x'), i),
    );
    const senders = remote.user.map(([, p]) => p.sender!);
    expect(new Set(senders.map((s) => s.id)).size).to.equal(5000);
    expect(senders[4096]!.id.slice(0, 4)).to.equal(senders[0]!.id.slice(0, 4));
    // Answer from the wire in reverse, so overflowed ones settle while their slot is taken.
    for (let i = senders.length - 1; i >= 0; i--) {
      const fromWire = new PID(senders[i]!.address, senders[i]!.id);
      const target = system.registry.get(fromWire);
      expect(target, `future ${i}`).to.not.equal(system.registry.get(new PID('nonhost', 'none')));
      target.post(fromWire, entryOf(`answer ${i}`), false);
    }
    expect(await Promise.all(pending)).to.deep.equal(senders.map((_, i) => `answer ${i}`));
    expect(system.registry.size).to.equal(before);
    expect(system.registry.getLocal(senders[4500]!.id)).to.equal(undefined);
  });

  it('treats its own address and nonhost as local', () => {
    system.address = '127.0.0.1:5000';
    const pid = system.root.spawnNamed(
      Props.fromFunc(() => {}),
      'me',
    );
    expect(pid.address).to.equal('127.0.0.1:5000');
    expect(system.registry.isLocal(new PID('nonhost', 'me'))).to.equal(true);
    expect(system.registry.getLocal('me')).to.not.equal(undefined);
  });

  it('refuses a taken id and the reserved future prefix', () => {
    const p = new RecordingProcess();
    system.registry.add('a', p);
    expect(() => system.registry.add('a', p)).to.throw(NameExistsError);
    expect(() => system.registry.add('f$1', p)).to.throw(InvalidArgumentError);
  });
});
