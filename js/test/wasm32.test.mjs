// The library's own wasm32 checks (js/src/selfcheck.rs) over the module the
// package ships, so one wasm build serves the package and these: typed
// Blosc2/deflate reads of a file h5py wrote (fixture/fixture.h5), a raw
// chunk batch, a filtered write read back, a medh5 sample created and
// verified in memory. A trap (a Rust panic aborts) or a failed check fails.
// Also: the module imports nothing but its wasm-bindgen glue (the library
// itself needs no host functions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ready } from '../pkg/index.js';
import { __selfCheck } from '../pkg/purehdf_js.js';

const fixture = new Uint8Array(fs.readFileSync(new URL('./fixture/fixture.h5', import.meta.url)));

test('the wasm module imports only its bindings', () => {
  const bytes = fs.readFileSync(new URL('../pkg/purehdf_js_bg.wasm', import.meta.url));
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(bytes));
  const modules = [...new Set(imports.map((i) => i.module))];
  assert.deepEqual(modules, ['./purehdf_js_bg.js'], JSON.stringify(imports.filter((i) => i.module !== './purehdf_js_bg.js')));
  assert.ok(imports.every((i) => i.kind === 'function'), 'only function imports');
});

for (const name of ['typed_reads', 'raw_chunks', 'write_read', 'medh5']) {
  test(`wasm32 check ${name}`, async () => {
    await ready();
    const summary = __selfCheck(name, fixture);
    console.log(`ok ${name}: ${summary}`);
    assert.equal(typeof summary, 'string');
  });
}

test('an unknown check fails', async () => {
  await ready();
  assert.throws(() => __selfCheck('nothing', fixture), /no check nothing/);
});
