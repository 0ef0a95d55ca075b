// The purehdf npm package against h5wasm (+ h5wasm-plugins for the filters
// libhdf5 lacks) in Node, on the same files (scripts/bench_js_files.py):
// open, metadata walk, full read per filter (warm: the open file read again;
// cold: a fresh open each time), 64³ patches; and the gzipped
// size of each side's WebAssembly. Both read from bytes in memory.
//
// Usage: node scripts/bench_js.mjs FILES_DIR   (after js/build.sh and
// `npm ci` in js/; prints a Markdown table; PUREHDF_BENCH_REPS runs per
// cell, default 5, the two sides in turns, best kept; PUREHDF_JS_PKG another
// build of the package to time instead of js/pkg; PUREHDF_BENCH_ONLY a
// comma-separated list of file stems to time, e.g. `lzf,gzip`).
//
// Times are the process's CPU time (user + system, `process.cpuUsage`) per
// repetition, not wall time: on a machine shared with other jobs a wall
// time includes the slices the scheduler gave away, more of them the longer
// the cell, so best-of-N wall times favoured short cells and moved by
// ±50 % between runs. The wall-time speed-up is printed beside it. The
// load average is printed before and after.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const js = path.join(here, '..', 'js');
const nm = path.join(js, 'node_modules');
const h5wasmNode = path.join(nm, 'h5wasm', 'dist', 'node', 'hdf5_hl.js');
const dir = process.argv[2];
if (!dir) { console.error('usage: node scripts/bench_js.mjs FILES_DIR'); process.exit(2); }

const pkgDir = process.env.PUREHDF_JS_PKG || path.join(js, 'pkg');
const only = process.env.PUREHDF_BENCH_ONLY ? process.env.PUREHDF_BENCH_ONLY.split(',') : null;
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();
const ours = await import(pathToFileURL(path.join(pkgDir, 'index.js')).href);
const h5wasm = (await import(pathToFileURL(h5wasmNode).href)).default;
const Module = await h5wasm.ready;
const pluginDir = path.join(nm, 'h5wasm-plugins', 'plugins');
const pluginPath = Module.get_plugin_search_paths()[0];
Module.FS.mkdirTree(pluginPath);
const NEEDED = ['blosc', 'blosc2', 'bshuf', 'bz2', 'lz4', 'lzf', 'zstd'];
for (const n of NEEDED) Module.FS.writeFile(`${pluginPath}/libH5Z${n}.so`, fs.readFileSync(path.join(pluginDir, `libH5Z${n}.so`)));

const REPS = Number(process.env.PUREHDF_BENCH_REPS || 5);

/** CPU milliseconds (user + system) of this process so far. */
function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Best CPU and wall times of `a` and `b` run in turns (a load spike hits
 * both sides alike): `[cpuA, cpuB, wallA, wallB]`. */
async function pair(a, b, reps = REPS) {
  const out = [Infinity, Infinity, Infinity, Infinity];
  for (let i = 0; i < reps; i++) {
    for (const [k, fn] of [[0, a], [1, b]]) {
      const c = cpuMs();
      const t = performance.now();
      await fn();
      out[k + 2] = Math.min(out[k + 2], performance.now() - t);
      out[k] = Math.min(out[k], cpuMs() - c);
    }
  }
  return out;
}

function h5wasmOpen(name, bytes) {
  Module.FS.writeFile(`/${name}`, bytes);
  return new h5wasm.File(`/${name}`, 'r');
}

const rows = [];
const notes = [];
const fmt = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
function row(cell, [a, b, wa, wb]) { rows.push({ cell, ours: a, h5wasm: b, wall: wb / wa }); }

// open + metadata walk
{
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'meta.h5')));
  row('open (meta.h5, bytes)', await pair(
    async () => { const f = await ours.open(bytes); f.close(); },
    () => { const f = h5wasmOpen('meta.h5', bytes); f.close(); },
  ));
  const oWalk = async () => {
    const f = await ours.open(bytes);
    let n = 0;
    for (const g of f.keys()) {
      const grp = await f.get(g);
      n += Object.keys(grp.attrs).length;
      for (const d of grp.keys()) { const ds = await grp.get(d); n += ds.shape.length + Object.keys(ds.attrs).length; }
    }
    f.close();
    return n;
  };
  const hWalk = () => {
    const f = h5wasmOpen('meta.h5', bytes);
    let n = 0;
    for (const g of f.keys()) {
      const grp = f.get(g);
      for (const a of Object.values(grp.attrs)) n += a.value ? 1 : 0;
      for (const d of grp.keys()) {
        const ds = grp.get(d);
        n += ds.shape.length + (ds.chunks ? 1 : 0) + ds.filters.length;
        for (const a of Object.values(ds.attrs)) n += a.value ? 1 : 0;
      }
    }
    f.close();
    return n;
  };
  row('metadata walk (40 groups, 160 datasets, attrs)', await pair(oWalk, hWalk));
}

// full reads and 64³ patches per filter
const names = fs.readdirSync(dir)
  .filter((n) => n.endsWith('.h5') && n !== 'meta.h5' && (!only || only.includes(n.replace('.h5', ''))))
  .sort();
// Warm-up: every file read once on each side, then a pause, so that the
// engine's optimising compilation of both modules (background threads,
// counted in this process's CPU time) is over before the first timed cell.
for (const n of names) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, n)));
  const f = await ours.open(bytes);
  await (await f.get('vol')).value;
  f.close();
  const h = h5wasmOpen(n, bytes);
  h.get('vol').value;
  h.close();
}
await new Promise((r) => setTimeout(r, 2000));

for (const n of names) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, n)));
  const of = await ours.open(bytes);
  const ods = await of.get('vol');
  const hf = h5wasmOpen(n, bytes);
  const hds = hf.get('vol');
  const a = await ods.value;
  const b = hds.value;
  const bad = a.length !== b.length ? 0 : a.findIndex((v, i) => v !== b[i]);
  if (a.length !== b.length || bad >= 0) {
    console.error(`${n}: values differ at ${bad}: purehdf ${a.slice(bad, bad + 4)}, h5wasm ${b.slice(bad, bad + 4)}`);
    notes.push(`${n}: h5wasm's values differ from purehdf's (first at element ${bad})`);
  }
  const full = await pair(() => ods.value, () => hds.value);
  row(`full read 128³ int16, ${n.replace('.h5', '')}`, full);
  const starts = [[0, 0, 0], [32, 32, 32], [64, 0, 64], [10, 50, 30]];
  const patch = await pair(
    async () => { for (const s of starts) await ods.slice(s.map((x) => [x, x + 64])); },
    () => { for (const s of starts) hds.slice(s.map((x) => [x, x + 64])); },
  );
  row(`4 patches 64³, ${n.replace('.h5', '')}`, patch);
  of.close();
  hf.close();
  // Cold: a fresh open per repetition on both sides, so no decoded chunk
  // is kept from one repetition to the next (purehdf's chunk cache holds
  // all eight of these chunks, libhdf5's default 1 MiB one two: the warm
  // rows of purehdf are cache hits where the whole volume fits, the cold
  // ones decode every chunk). Both sides take the bytes in afresh (purehdf
  // copies them into its memory, h5wasm writes them to its file system).
  const cold = await pair(
    async () => { const f = await ours.open(bytes); await (await f.get('vol')).value; f.close(); },
    () => { const f = h5wasmOpen(n, bytes); const v = f.get('vol').value; f.close(); return v; },
  );
  row(`open + full read (cold), ${n.replace('.h5', '')}`, cold);
}

const gz = (p) => zlib.gzipSync(fs.readFileSync(p), { level: 9 }).length;
const ourWasm = gz(path.join(pkgDir, 'purehdf_js_bg.wasm')) + gz(path.join(pkgDir, 'purehdf_js.js')) + gz(path.join(pkgDir, 'index.js'));
const h5dir = path.dirname(h5wasmNode);
const h5files = fs.readdirSync(h5dir).map((f) => path.join(h5dir, f)).filter((f) => fs.statSync(f).isFile());
const h5Size = h5files.reduce((s, f) => s + gz(f), 0);
const plugSize = NEEDED.reduce((s, p) => s + gz(path.join(pluginDir, `libH5Z${p}.so`)), 0);

console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${load()} after; ${REPS} repetitions, ${os.cpus().length} CPUs\n`);
console.log(`| cell | purehdf (CPU ms) | h5wasm (CPU ms) | speed-up | wall speed-up |\n|---|---:|---:|---:|---:|`);
for (const r of rows) console.log(`| ${r.cell} | ${fmt(r.ours)} | ${fmt(r.h5wasm)} | ${(r.h5wasm / r.ours).toFixed(2)}× | ${r.wall.toFixed(2)}× |`);
console.log(`\ngzipped: purehdf ${(ourWasm / 1024).toFixed(0)} KiB (wasm + glue); h5wasm ${(h5Size / 1024).toFixed(0)} KiB (node build: ${h5files.map((f) => path.basename(f)).join(', ')}) + plugins ${(plugSize / 1024).toFixed(0)} KiB (${NEEDED.join(', ')}) = ${((h5Size + plugSize) / 1024).toFixed(0)} KiB`);
for (const n of notes) console.log(`\nnote: ${n}`);
