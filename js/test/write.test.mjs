// Files written in memory by FileWriter and read back, and errors: kinds,
// messages, hostile bytes that never trap the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, ready, FileWriter } from '../pkg/index.js';

test('FileWriter round trip', async () => {
  await ready();
  const w = new FileWriter();
  const big = BigInt64Array.from([-(2n ** 62n), 0n, 5n, 2n ** 62n]);
  w.createGroup('g')
    .createGroup('g/h')
    .createDataset({ name: 'g/x', data: new Float32Array([1.5, 2, 3, 4, 5, 6]), shape: [2, 3], chunks: [1, 2], filters: [['shuffle'], ['zstd', 3]] })
    .createDataset({ name: 'g/h/i', data: big, chunks: [2], filters: ['blosc2', 5, 5, 2] })
    .createDataset({ name: 'names', data: ['a', 'bé', ''] })
    .createDataset({ name: 'n', data: 7, dtype: '<i4' })
    .createDataset({ name: 'z', data: new Uint16Array(1000).map((_, i) => i), chunks: [100], filters: 'gzip' })
    .setAttribute('/', 'title', 'hello')
    .setAttribute('g/x', 'scale', new Float64Array([0.5, 2]));
  const bytes = w.toBytes();
  assert.ok(bytes instanceof Uint8Array && bytes.length > 0);
  const f = await open(bytes);
  assert.deepEqual(f.keys().sort(), ['g', 'n', 'names', 'z']);
  assert.equal(f.attrs.title.value, 'hello');
  const x = await f.get('g/x');
  assert.deepEqual(x.shape, [2, 3]);
  assert.equal(x.dtype, '<f4');
  assert.deepEqual(x.chunks, [1, 2]);
  assert.deepEqual(x.filters.map((fl) => fl.name), ['shuffle', 'zstd']);
  assert.deepEqual(Array.from(await x.value), [1.5, 2, 3, 4, 5, 6]);
  assert.deepEqual(Array.from(await x.slice([[1], [0, 3, 2]])), [4, 6]);
  assert.deepEqual(Array.from(x.attrs.scale.value), [0.5, 2]);
  const i = await f.get('/g/h/i');
  const iv = await i.value;
  assert.ok(iv instanceof BigInt64Array);
  assert.deepEqual(Array.from(iv), Array.from(big));
  assert.deepEqual(await (await f.get('names')).value, ['a', 'bé', '']);
  assert.equal(await (await f.get('n')).value, 7);
  const z = await f.get('z');
  assert.equal(z.filters[0].name, 'deflate');
  assert.deepEqual(Array.from(await z.slice([[995, 1000]])), [995, 996, 997, 998, 999]);
  assert.equal(await f.get('nope'), null);
});

test('errors are Errors with a kind', async () => {
  await assert.rejects(open(new Uint8Array([1, 2, 3])), (e) => e instanceof Error && typeof e.kind === 'string' && e.message.length > 0);
  const w = new FileWriter();
  w.createDataset({ name: 'x', data: new Int32Array([1, 2, 3]) });
  const f = await open(w.toBytes());
  const x = await f.get('x');
  await assert.rejects(x.slice([[0, 3, 0]]), (e) => e.kind === 'InvalidArgument');
  // a path through a dataset: absent, or an Error with a kind
  const through = await f.get('x/y').catch((e) => e);
  assert.ok(through === null || (through instanceof Error && through.kind), String(through));
  assert.throws(() => new FileWriter().createDataset({ name: 'a/b', data: [1] }), (e) => e.kind === 'NotFound');
});

test('hostile bytes never trap the module', async () => {
  await ready();
  const w = new FileWriter();
  w.createGroup('g').createDataset({ name: 'g/x', data: new Float64Array(4096).map((_, i) => i), chunks: [256], filters: [['shuffle'], ['gzip', 6]] });
  w.setAttribute('g', 'a', 'text');
  const good = w.toBytes();
  let seed = 99;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  let failures = 0;
  for (let k = 0; k < 300; k++) {
    const b = good.slice(0, k % 7 === 0 ? rnd(good.length) : good.length);
    for (let j = 0; j < 1 + rnd(8); j++) b[rnd(b.length)] = rnd(256);
    try {
      const f = await open(b);
      const g = await f.get('g');
      if (g && g.type === 'Group') {
        const x = await g.get('x');
        if (x && x.type === 'Dataset') await x.value;
      }
      f.close();
    } catch (e) {
      assert.ok(e instanceof Error, String(e));
      assert.ok(typeof e.kind === 'string', `no kind: ${e}`);
      failures++;
    }
  }
  // the module still works after all of that
  const f = await open(good);
  assert.equal((await (await f.get('g/x')).slice([[4095]]))[0], 4095);
  assert.ok(failures > 0);
});
