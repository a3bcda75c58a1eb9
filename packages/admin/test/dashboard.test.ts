import { expect } from 'chai';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestCluster } from '@granary/testkit';
import { AddRequest } from './fixtures/gen/admin-test.granary';
import { adminUrlOf, api, startAdminCluster, TOKEN } from './fixtures/admin-cluster';

/** Debian's Chromium (`.ci/run` installs the chromium package); override with CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots of each step (the README shows one of them). */
const OUT = join(__dirname, '..', '..', 'test-output', 'dashboard');
const KIND = 'admintest.Counter';
const TTL_MS = 5000;

describe('dashboard in headless Chromium', function () {
  this.timeout(180_000);
  let tc: TestCluster;
  let url: string;
  let browser: Browser | undefined;
  let page: Page;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(
        `      skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
      );
      this.skip();
    }
    mkdirSync(OUT, { recursive: true });
    tc = await startAdminCluster();
    url = await adminUrlOf(tc.nodes[0]!);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // CI runs as root, where Chromium refuses its sandbox.
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });

  after(async () => {
    await browser?.close();
    await tc?.stop();
  });

  const shot = (name: string) => page.screenshot({ path: join(OUT, name), fullPage: true });

  it('refuses a wrong token, then signs in and shows the 3 members', async () => {
    await page.goto(`${url}/`);
    await page.fill('#token', 'not-the-token-not-the-token');
    await page.click('#signin');
    await page.waitForSelector('#signin-error:has-text("refused")');
    await page.fill('#token', TOKEN);
    await page.click('#signin');
    await page.waitForFunction(() => document.querySelectorAll('#members tbody tr').length === 3);
    const rows = await page.$$eval('#members tbody tr', (trs) =>
      trs.map((tr) => tr.textContent ?? ''),
    );
    expect(rows.map((r) => r.slice(0, 6))).to.deep.equal(['node-0', 'node-1', 'node-2']);
    for (const r of rows) expect(r).to.contain('up');
    await page.waitForSelector('#shard-map .shard');
    await shot('01-signed-in.png');
  });

  it('under load the call rate and the activation count change', async () => {
    const before = await page.locator('#calls-chart canvas').first().screenshot();
    const activationsBefore = Number(await page.textContent('#activations-total'));
    const payload = Buffer.from(AddRequest.encode({ amount: '1' })).toString('base64');
    const stop = Date.now() + 4000;
    let calls = 0;
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; Date.now() < stop; i++) {
        const r = await api(url, '/v1/call', {
          body: { kind: KIND, id: `load-${w}-${i % 10}`, method: 'admintest.Counter/Add', payload },
        });
        expect(r.status).to.equal(200);
        calls++;
      }
    });
    await Promise.all(workers);
    await page.waitForFunction(
      () => Number(document.querySelector('#call-rate')?.textContent) > 0,
      undefined,
      { timeout: 5000 },
    );
    await page.waitForFunction(
      (n) => Number(document.querySelector('#activations-total')?.textContent) >= n + 80,
      activationsBefore,
      { timeout: 5000 },
    );
    const after = await page.locator('#calls-chart canvas').first().screenshot();
    expect(Buffer.compare(before, after)).to.not.equal(0);
    expect(calls).to.be.above(80);
    await shot('02-under-load.png');
  });

  it('a killed member leaves the page within TTL + 2 s', async () => {
    const t0 = Date.now();
    await tc.kill(tc.nodes[2]!);
    await page.waitForFunction(
      () =>
        ![...document.querySelectorAll('#members tbody tr')].some((tr) =>
          tr.textContent?.startsWith('node-2'),
        ),
      undefined,
      { timeout: TTL_MS + 2000 + 1000, polling: 100 },
    );
    const ms = Date.now() - t0;
    console.log(`      node-2 left the page ${ms} ms after SIGKILL (TTL ${TTL_MS} ms)`);
    expect(ms).to.be.at.most(TTL_MS + 2000);
    expect(await page.$$('#members tbody tr')).to.have.length(2);
    await shot('03-member-left.png');
  });

  it('locates a grain', async () => {
    // The previous test killed node-2, which may have hosted it: a call activates it on its
    // owner now, so the page has an activation to show.
    const payload = Buffer.from(AddRequest.encode({ amount: '1' })).toString('base64');
    const call = await api(url, '/v1/call', {
      body: { kind: KIND, id: 'load-0-1', method: 'admintest.Counter/Add', payload },
    });
    expect(call.status, JSON.stringify(call.body)).to.equal(200);
    await page.fill('#locate-kind', KIND);
    await page.fill('#locate-id', 'load-0-1');
    await page.click('#locate-go');
    await page.waitForSelector('#locate-result:has-text("owner")');
    const text = (await page.textContent('#locate-result')) ?? '';
    const r = await api(url, `/v1/locate?kind=${KIND}&id=load-0-1`);
    expect(text).to.contain(`owner ${r.body.owner.id}`);
    expect(text).to.contain(`epoch ${r.body.epoch}`);
    expect(text).to.contain('active:');
    await shot('04-locate.png');
  });
});
