// A medh5 sample written by the reference medh5 package (make_sample.py)
// opened from bytes and over HTTP: identity, content_id, verify, validate,
// image voxels and labelmap at known points, and the bytes one slice costs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSample } from '../pkg/index.js';
import { serve } from './server.mjs';

const dir = process.env.PUREHDF_JS_SAMPLE;
const info = dir ? JSON.parse(fs.readFileSync(path.join(dir, 'sample.json'), 'utf8')) : null;
const skip = !dir && 'no sample (run js/test.sh)';

async function checkSlice(s) {
  const ct = s.images.CT;
  assert.deepEqual(ct.shape, info.shape);
  assert.equal(ct.dtype, '<i2');
  const z = info.slice;
  const plane = await ct.read([[z, z + 1], [], []]);
  assert.ok(plane instanceof Int16Array);
  assert.equal(plane.length, info.shape[1] * info.shape[2]);
  assert.equal(plane.reduce((a, b) => a + b, 0), info.slice_sum);
  const lm = await s.annotations.seg.labelmap([[z, z + 1], [], []]);
  assert.deepEqual(lm.shape, [1, info.shape[1], info.shape[2]]);
  assert.equal(lm.data.reduce((a, b) => a + (b > 0 ? 1 : 0), 0), info.label_count);
  for (const p of info.points) {
    const [, y, x] = p.at;
    assert.equal(plane[y * info.shape[2] + x], p.ct, `CT at ${p.at}`);
    assert.equal(lm.data[y * info.shape[2] + x], p.label, `label at ${p.at}`);
  }
}

test('medh5 sample from bytes', { skip }, async () => {
  const s = await openSample(fs.readFileSync(path.join(dir, 'sample.medh5')));
  assert.equal(s.content_id, info.content_id);
  assert.equal(s.identity.sample_id, 'viewer');
  assert.deepEqual(Object.keys(s.images), ['CT']);
  assert.deepEqual(Object.keys(s.annotations), ['seg']);
  await checkSlice(s);
  const v = await s.verify();
  assert.equal(v.ok, true, JSON.stringify(v));
  assert.equal(v.content_id_ok, true);
  assert.equal(await s.computeContentId(), info.content_id);
  const r = await s.validate();
  assert.equal(typeof r.ok, 'boolean');
  assert.ok(Array.isArray(r.diagnostics));
  assert.equal(r.diagnostics.filter((d) => d.code.startsWith('E')).length, 0, JSON.stringify(r.diagnostics));
  await assert.rejects(s.images.CT.read([[0, 1, 0]]), (e) => e.kind === 'InvalidArgument');
  s.close();
});

test('medh5 sample over HTTP: one slice with labels fetches < 5 % of the file', { skip }, async () => {
  const srv = await serve({ '/': dir });
  try {
    const s = await openSample(`${srv.url}/sample.medh5`);
    assert.equal(s.content_id, info.content_id);
    await checkSlice(s);
    const ratio = srv.stats.bytes / info.size;
    console.log(`sample.medh5: open + one slice + its labels fetched ${srv.stats.bytes} of ${info.size} bytes (${(100 * ratio).toFixed(2)} %) in ${srv.stats.requests} requests, ${s.file.stats.rounds} rounds`);
    assert.equal(srv.stats.bytes, s.file.stats.bytesFetched);
    assert.ok(ratio < 0.05, `fetched ${(100 * ratio).toFixed(1)} %`);
  } finally {
    await srv.close();
  }
});
