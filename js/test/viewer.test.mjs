// The viewer page in a real browser (Chromium driven by playwright-core):
// served by a local server with range requests, it opens a medh5 sample by
// URL and by file input; the tree, the slice's pixel values and labels, and
// the bytes fetched (< 5 % of the file for the URL) are checked, and a
// screenshot of each is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const jsDir = path.dirname(here);
const dir = process.env.PUREHDF_JS_SAMPLE;
const exe = process.env.PUREHDF_JS_CHROMIUM;
const artifacts = process.env.PUREHDF_JS_ARTIFACTS || path.join(jsDir, 'target');
const skip = (!dir && 'no sample (run js/test.sh)') || (!exe && 'no chromium (PUREHDF_JS_CHROMIUM)');

async function checkView(page, info) {
  await page.waitForFunction(() => document.body.dataset.ready === '1' && window.viewerState.labelValues, null, { timeout: 120000 });
  const paths = await page.$$eval('#tree li', (els) => els.map((e) => e.dataset.path));
  for (const p of ['/images', '/images/CT', '/annotations', '/annotations/seg', '/meta']) assert.ok(paths.includes(p), `tree lacks ${p}: ${paths}`);
  const text = await page.textContent('#info');
  assert.match(text, /shape \[320,256,256\]|shape \[\d+,\d+,\d+\]/);
  assert.match(text, /chunks \[2,128,128\]/);
  const w = info.shape[2];
  const got = await page.evaluate(([pts, w]) => pts.map((p) => [window.viewerState.values[p.at[1] * w + p.at[2]], window.viewerState.labelValues[p.at[1] * w + p.at[2]]]), [info.points, w]);
  assert.deepEqual(got, info.points.map((p) => [p.ct, p.label]));
  const sum = await page.evaluate(() => window.viewerState.values.reduce((a, b) => a + b, 0));
  assert.equal(sum, info.slice_sum);
  // the canvas shows the labels: a labelled pixel is tinted, an unlabelled one gray
  const px = await page.evaluate(([pts, w]) => {
    const ctx = document.getElementById('canvas').getContext('2d');
    return pts.map((p) => Array.from(ctx.getImageData(p.at[2], p.at[1], 1, 1).data));
  }, [info.points, w]);
  info.points.forEach((p, i) => {
    const [r, g, b] = px[i];
    if (p.label) assert.ok(r !== g || g !== b, `pixel ${p.at} should be tinted: ${px[i]}`);
    else assert.ok(r === g && g === b, `pixel ${p.at} should be gray: ${px[i]}`);
  });
}

test('viewer opens a medh5 sample by URL and by file input', { skip, timeout: 600000 }, async () => {
  const { chromium } = await import('playwright-core');
  const info = JSON.parse(fs.readFileSync(path.join(dir, 'sample.json'), 'utf8'));
  const srv = await serve({ '/data/': dir, '/': jsDir });
  const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox', '--disable-gpu'] });
  fs.mkdirSync(artifacts, { recursive: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.on('pageerror', (e) => console.log('page error:', e.message));
    const url = `${srv.url}/data/sample.medh5`;
    await page.goto(`${srv.url}/viewer/index.html?url=${encodeURIComponent(url)}`);
    await checkView(page, info);
    const served = srv.stats.byFile['sample.medh5'];
    const ratio = served / info.size;
    console.log(`viewer by URL: ${served} of ${info.size} bytes fetched (${(100 * ratio).toFixed(2)} %)`);
    assert.ok(ratio < 0.05, `fetched ${(100 * ratio).toFixed(2)} % of the file`);
    const pageBytes = await page.evaluate(() => Number(document.body.dataset.bytesFetched));
    assert.equal(pageBytes, served);
    await page.screenshot({ path: path.join(artifacts, 'viewer-url.png') });
    // move the index slider: one more slice, a few more chunks
    await page.evaluate(() => { const i = document.getElementById('index'); i.value = '10'; i.dispatchEvent(new Event('input')); });
    await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('index-v').textContent === '10');
    assert.ok(srv.stats.byFile['sample.medh5'] < 0.1 * info.size);

    const page2 = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page2.goto(`${srv.url}/viewer/index.html`);
    await page2.setInputFiles('#file', path.join(dir, 'sample.medh5'));
    await checkView(page2, info);
    await page2.screenshot({ path: path.join(artifacts, 'viewer-file.png') });
    console.log(`screenshots: ${path.join(artifacts, 'viewer-url.png')}, viewer-file.png`);
  } finally {
    await browser.close();
    await srv.close();
  }
});
