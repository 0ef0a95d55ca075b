// Random h5py files read by the package, from bytes, from a Blob and from
// a local HTTP server with range requests: every value equals h5py's
// (expected.json, written by make_files.py next to the files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { open } from '../pkg/index.js';
import { serve } from './server.mjs';

const dir = process.env.PUREHDF_JS_FILES;
const expected = dir ? JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) : {};
const names = Object.keys(expected).filter((n) => n.startsWith('r'));

/** A value as make_files.py dumps it. */
function norm(v) {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (v === Infinity) return 'inf';
    if (v === -Infinity) return '-inf';
    return v;
  }
  if (v && typeof v === 'object' && !ArrayBuffer.isView(v) && !Array.isArray(v)) {
    const o = {};
    for (const k of Object.keys(v)) o[k] = norm(v[k]);
    return o;
  }
  return v;
}

function list(values) {
  return Array.from(values, norm);
}

/** The C-order elements of `flat` (shape `shape`) in box `start + count`. */
function box(flat, shape, start, count) {
  const out = [];
  const rec = (axis, base) => {
    if (axis === shape.length) { out.push(flat[base]); return; }
    for (let i = 0; i < count[axis]; i++) rec(axis + 1, base * shape[axis] + start[axis] + i);
  };
  rec(0, 0);
  return out;
}

let seed = 12345;
function rand(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }

async function checkFile(f, exp, name) {
  assert.equal(f.attrs.title.value, 'random file', name);
  assert.deepEqual(norm(f.attrs.scale.value), exp.attrs.scale);
  assert.deepEqual(list(f.attrs.counts.value), exp.attrs.counts);
  assert.deepEqual(f.keys().sort(), [...new Set(Object.keys(exp.datasets).map((p) => p.split('/')[1]))].sort());
  for (const [p, e] of Object.entries(exp.datasets)) {
    const ds = await f.get(p);
    assert.equal(ds.type, 'Dataset', `${name}${p}`);
    assert.deepEqual(ds.shape, e.shape, `${name}${p} shape`);
    assert.equal(ds.attrs.pipeline.value, e.pipeline);
    if (e.pipeline !== 'contiguous') assert.ok(ds.chunks, `${name}${p} chunks`);
    const v = await ds.value;
    const got = e.shape.length === 0 ? [norm(v)] : list(v);
    assert.deepEqual(got, e.values, `${name}${p} (${e.kind}, ${e.pipeline}) values`);
    if (e.shape.length) {
      const start = e.shape.map((d) => rand(d));
      const count = e.shape.map((d, i) => 1 + rand(d - start[i]));
      const s = await ds.slice(start.map((a, i) => [a, a + count[i]]));
      assert.deepEqual(list(s), box(e.values, e.shape, start, count), `${name}${p} slice ${start} ${count}`);
    }
  }
}

test('random h5py files from bytes', { skip: !dir && 'no files (run js/test.sh)' }, async () => {
  assert.ok(names.length >= 100 || process.env.PUREHDF_JS_FEW, `${names.length} files`);
  for (const n of names) {
    const bytes = fs.readFileSync(path.join(dir, n));
    const f = await open(new Uint8Array(bytes));
    await checkFile(f, expected[n], n);
    f.close();
  }
});

test('random h5py files from a Blob', { skip: !dir && 'no files' }, async () => {
  for (const n of names.slice(0, 25)) {
    const f = await open(new Blob([fs.readFileSync(path.join(dir, n))]));
    await checkFile(f, expected[n], n);
    f.close();
  }
});

test('random h5py files over HTTP range requests', { skip: !dir && 'no files' }, async () => {
  const srv = await serve({ '/': dir });
  try {
    for (const n of names) {
      const f = await open(`${srv.url}/${n}`);
      await checkFile(f, expected[n], n);
      assert.ok(f.stats.requests > 0);
      f.close();
    }
    // every file's bytes were served (each at least once), byte counts add up
    const served = Object.values(srv.stats.byFile).reduce((a, b) => a + b, 0);
    assert.equal(served, srv.stats.bytes);
  } finally {
    await srv.close();
  }
});

test('one chunk of a large remote file fetches a small part of it', { skip: !dir && 'no files' }, async () => {
  const srv = await serve({ '/': dir });
  try {
    const size = fs.statSync(path.join(dir, 'big.h5')).size;
    const f = await open(`${srv.url}/big.h5`);
    const ds = await f.get('/vol');
    const probe = expected['big.h5'].probe;
    const [z, y, x] = probe.index;
    const v = await ds.slice([[z, z + 1], [y, y + 1], [x, x + 1]]);
    assert.equal(v[0], probe.value);
    const ratio = srv.stats.bytes / size;
    assert.equal(srv.stats.bytes, f.stats.bytesFetched);
    assert.ok(ratio < 0.2, `fetched ${srv.stats.bytes} of ${size} bytes`);
    console.log(`big.h5: one element fetched ${srv.stats.bytes} of ${size} bytes (${(100 * ratio).toFixed(1)} %) in ${srv.stats.requests} requests`);
  } finally {
    await srv.close();
  }
});

test('a remote file replaced after opening fails with StaleSnapshot', { skip: !dir && 'no files' }, async () => {
  const tmp = fs.mkdtempSync(path.join(path.dirname(dir), 'stale-'));
  fs.copyFileSync(path.join(dir, 'big.h5'), path.join(tmp, 'big.h5'));
  const srv = await serve({ '/': tmp });
  try {
    const f = await open(`${srv.url}/big.h5`);
    const ds = await f.get('/vol');
    const b = fs.readFileSync(path.join(tmp, 'big.h5'));
    fs.writeFileSync(path.join(tmp, 'big.h5'), Buffer.concat([b, Buffer.from('x')]));
    await assert.rejects(ds.slice([[40, 41], [], []]), (e) => e instanceof Error && e.kind === 'StaleSnapshot');
  } finally {
    await srv.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
