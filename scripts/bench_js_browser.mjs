// Time to the first slice of a 1 GiB HDF5 file served over loopback, in
// Chromium: the purehdf npm package (HTTP range requests: the superblock,
// the chunk index and the slice's chunks) against h5wasm (which reads from
// its in-memory file system, so the page downloads the whole file first,
// then opens it and reads the slice). Each run is a fresh page with the
// module already loaded (its load time is reported apart); the server
// sends no-store, so nothing is cached between runs. Run by hand, not in CI.
//
// Usage: node scripts/bench_js_browser.mjs DIR [RUNS]  (DIR/big.h5 from
// scripts/bench_js_browser.py; after js/build.sh and `npm ci` in js/;
// PUREHDF_JS_CHROMIUM or `chromium` on PATH)
import fs from 'node:fs';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const js = path.join(here, '..', 'js');
const dir = process.argv[2];
const runs = Number(process.argv[3] || 3);
if (!dir || !fs.existsSync(path.join(dir, 'big.h5'))) {
  console.error('usage: node scripts/bench_js_browser.mjs DIR [RUNS] (DIR/big.h5 from scripts/bench_js_browser.py)');
  process.exit(2);
}
const exe = process.env.PUREHDF_JS_CHROMIUM || execSync('command -v chromium', { shell: '/bin/sh' }).toString().trim();
const { serve } = await import(pathToFileURL(path.join(js, 'test', 'server.mjs')).href);
const { chromium } = await import(pathToFileURL(path.join(js, 'node_modules', 'playwright-core', 'index.mjs')).href);

const size = fs.statSync(path.join(dir, 'big.h5')).size;
const Z = 300; // the slice: vol[300, :, :]
const srv = await serve({ '/data/': dir, '/js/': js });
fs.writeFileSync(path.join(dir, 'bench.html'), '<!doctype html><title>bench</title>');
const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox', '--disable-gpu'] });

// The slice's values are checked against the formula the file was written with.
const check = `(v, z) => { let bad = 0; for (let y = 0; y < 1024; y += 97) for (let x = 0; x < 1024; x += 89) { if (v[y * 1024 + x] !== ((7 * z + 3 * y + x) % 30011) - 15000) bad++; } if (v.length !== 1024 * 1024 || bad) throw new Error('wrong values: ' + bad); }`;

async function one(side) {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(`${srv.url}/data/bench.html`);
  const before = srv.stats.byFile['big.h5'] || 0;
  const r = await page.evaluate(async ([side, url, z, check]) => {
    const ok = eval(check);
    const t0 = performance.now();
    if (side === 'purehdf') {
      const m = await import('/js/pkg/index.js');
      await m.ready();
      const t1 = performance.now();
      const f = await m.open(url);
      const ds = await f.get('vol');
      const v = await ds.slice([[z, z + 1], [], []]);
      const t2 = performance.now();
      ok(v, z);
      const s = f.stats;
      f.close();
      return { load: t1 - t0, first: t2 - t1, requests: s.requests, rounds: s.rounds };
    }
    const h5 = await import('/js/node_modules/h5wasm/dist/esm/hdf5_hl.js');
    const Module = await h5.ready;
    const t1 = performance.now();
    const buf = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const t2 = performance.now();
    Module.FS.writeFile('/big.h5', buf);
    const f = new h5.File('/big.h5', 'r');
    const v = f.get('vol').slice([[z, z + 1], [], []]);
    const t3 = performance.now();
    ok(v, z);
    f.close();
    Module.FS.unlink('/big.h5');
    return { load: t1 - t0, first: t3 - t1, download: t2 - t1, requests: 1 };
  }, [side, `${srv.url}/data/big.h5`, Z, check]);
  r.bytes = (srv.stats.byFile['big.h5'] || 0) - before;
  await page.close();
  return r;
}

const version = browser.version();
const rows = {};
for (let i = 0; i < runs; i++) {
  for (const side of ['purehdf', 'h5wasm']) {
    const r = await one(side);
    console.error(side, JSON.stringify(r));
    if (!rows[side] || r.first < rows[side].first) rows[side] = r;
  }
}
await browser.close();
await srv.close();
fs.unlinkSync(path.join(dir, 'bench.html'));

const mib = (b) => (b / 1048576).toFixed(b < 1048576 * 10 ? 2 : 0);
console.log(`big.h5: ${mib(size)} MiB, int16 (512, 1024, 1024), chunks (8, 256, 256); slice vol[${Z}, :, :] (2 MiB); best of ${runs}, Chromium ${version}\n`);
console.log('| | time to first slice (ms) | fetched (MiB) | requests | module load (ms) |\n|---|---:|---:|---:|---:|');
const p = rows.purehdf, h = rows.h5wasm;
console.log(`| purehdf (range reads, ${p.rounds} rounds) | ${p.first.toFixed(0)} | ${mib(p.bytes)} | ${p.requests} | ${p.load.toFixed(0)} |`);
console.log(`| h5wasm (download ${h.download.toFixed(0)} ms, then open + slice) | ${h.first.toFixed(0)} | ${mib(h.bytes)} | ${h.requests} | ${h.load.toFixed(0)} |`);
console.log(`\nspeed-up: ${(h.first / p.first).toFixed(1)}×`);
