import { expect } from 'chai';
import { PoisonPill } from '@granary/core';
import { Mailbox } from '../src/internal';

describe('Mailbox', () => {
  describe('shift order', () => {
    it('drains system, then urgent, then user', () => {
      const m = new Mailbox();
      m.pushUser('u1');
      m.pushUrgent('p1');
      m.pushSystem('s1');
      m.pushUser('u2');
      m.pushSystem('s2');
      const out: unknown[] = [];
      while (m.hasSystem()) out.push(m.shiftSystem());
      while (m.hasUser()) out.push(m.shiftUser());
      expect(out).to.deep.equal(['s1', 's2', 'p1', 'u1', 'u2']);
    });

    it('keeps FIFO order across a compaction of a lane that never drains', () => {
      const m = new Mailbox();
      let next = 0;
      const out: unknown[] = [];
      for (let round = 0; round < 50; round++) {
        for (let i = 0; i < 1000; i++) m.pushUser(next++);
        for (let i = 0; i < 900; i++) out.push(m.shiftUser());
      }
      while (m.hasUser()) out.push(m.shiftUser());
      expect(out).to.deep.equal(Array.from({ length: next }, (_, i) => i));
    });
  });

  describe('overflow (a lane flooded past its ring)', () => {
    it('keeps FIFO order while a flood spills into chunks and drains back into the ring', () => {
      const m = new Mailbox();
      let next = 0;
      const out: unknown[] = [];
      for (let i = 0; i < 5000; i++) m.pushUser(next++);
      for (let i = 0; i < 3000; i++) out.push(m.shiftUser());
      for (let i = 0; i < 5000; i++) m.pushUser(next++);
      expect(m.userCount).to.equal(7000);
      while (m.hasUser()) out.push(m.shiftUser());
      // Drained: later messages use the ring again.
      for (let i = 0; i < 10; i++) m.pushUser(next++);
      while (m.hasUser()) out.push(m.shiftUser());
      expect(out).to.deep.equal(Array.from({ length: next }, (_, i) => i));
      expect(m.shiftUser()).to.equal(undefined);
    });

    it('counts overflow entries against the capacity', () => {
      const m = new Mailbox(3000);
      for (let i = 0; i < 3000; i++) expect(m.pushUser(i)).to.equal(true);
      expect(m.pushUser(3000)).to.equal(false);
      expect(m.pushUrgent('p')).to.equal(false);
      expect(m.userCount).to.equal(3000);
    });

    it('drainUser returns urgent entries, then the ring, then the overflow, in order', () => {
      const m = new Mailbox();
      for (let i = 0; i < 2500; i++) m.pushUser(i);
      m.pushUrgent('p');
      const drained = m.drainUser();
      expect(drained).to.deep.equal(['p', ...Array.from({ length: 2500 }, (_, i) => i)]);
      expect(m.hasUser()).to.equal(false);
      expect(m.userCount).to.equal(0);
    });
  });

  describe('capacity', () => {
    it('refuses a user message when the user lanes are full, enqueuing nothing', () => {
      const m = new Mailbox(2);
      expect(m.pushUser(1)).to.equal(true);
      expect(m.pushUrgent(2)).to.equal(true);
      expect(m.pushUser(3)).to.equal(false);
      expect(m.pushUrgent(4)).to.equal(false);
      expect(m.userCount).to.equal(2);
    });

    it('never refuses a system message or a PoisonPill', () => {
      const m = new Mailbox(1);
      m.pushUser(1);
      m.pushSystem('stop');
      expect(m.pushUser(new PoisonPill())).to.equal(true);
      expect(m.systemCount).to.equal(1);
    });
  });

  describe('prependUser', () => {
    it('puts entries back in front, in their order', () => {
      const m = new Mailbox();
      m.pushUser('c');
      m.prependUser(['a', 'b']);
      expect([m.shiftUser(), m.shiftUser(), m.shiftUser()]).to.deep.equal(['a', 'b', 'c']);
    });

    it('leaves urgent entries in the urgent lane', () => {
      const m = new Mailbox();
      m.pushUrgent('p');
      m.pushUser('c');
      m.prependUser(['a']);
      expect([m.shiftUser(), m.shiftUser(), m.shiftUser()]).to.deep.equal(['p', 'a', 'c']);
    });

    it('puts entries back in front of a flooded lane', () => {
      const m = new Mailbox();
      for (let i = 0; i < 2000; i++) m.pushUser(i);
      m.prependUser(['a', 'b']);
      const out: unknown[] = [];
      while (m.hasUser()) out.push(m.shiftUser());
      expect(out).to.deep.equal(['a', 'b', ...Array.from({ length: 2000 }, (_, i) => i)]);
    });
  });
});
