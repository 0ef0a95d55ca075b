// The purehdf viewer: open an HDF5 or medh5 file from a file input, a drop
// or a URL (read with HTTP range requests), list its tree with attributes,
// describe a dataset, and show 2-D/3-D slices (axis and index sliders,
// window/level, colormap, a medh5 labelmap over its image) or a 1-D line
// plot. Only the chunks the current view needs are fetched.
import { open, openSample } from '../pkg/index.js';

const $ = (id) => document.getElementById(id);
const state = { file: null, sample: null, ds: null, labels: null, values: null, shape: null, lo: 0, hi: 1, busy: 0 };
window.viewerState = state;

function progress(p) {
  $('progress').textContent = `fetching ${(p.done / 1024).toFixed(0)} / ${(p.total / 1024).toFixed(0)} KiB · total ${(p.bytesFetched / 1024).toFixed(0)} KiB in ${p.requests} requests`;
  document.body.dataset.bytesFetched = String(p.bytesFetched);
}

function fmtValue(v) {
  if (v === null || v === undefined) return String(v);
  if (ArrayBuffer.isView(v)) return `[${Array.from(v.slice(0, 8)).join(', ')}${v.length > 8 ? ', …' : ''}]`;
  if (Array.isArray(v)) return JSON.stringify(v.slice(0, 8)) + (v.length > 8 ? '…' : '');
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v);
}

async function openSource(src) {
  document.body.dataset.ready = '';
  $('status').textContent = 'opening…';
  if (state.file) state.file.close();
  state.ds = null;
  state.sample = null;
  $('tree').innerHTML = '';
  $('sample').textContent = '';
  try {
    try {
      state.sample = await openSample(src, { onProgress: progress });
      state.file = state.sample.file;
    } catch (e) {
      state.file = await open(src, { onProgress: progress });
    }
    await renderTree(state.file, $('tree'), 0);
    document.body.dataset.tree = 'ready';
    if (state.sample) {
      const s = state.sample;
      $('sample').textContent = `medh5 sample ${s.identity.sample_id || ''} · ${s.content_id || 'no content_id'} · images: ${Object.keys(s.images).join(', ')} · annotations: ${Object.keys(s.annotations).join(', ')}`;
      const first = Object.values(s.images)[0];
      if (first) await select(first.dataset);
    }
    $('status').textContent = '';
  } catch (e) {
    $('status').textContent = `error (${e.kind || 'Error'}): ${e.message}`;
    document.body.dataset.error = e.message;
  }
}

async function renderTree(group, ul, depth) {
  for (const name of group.keys()) {
    const li = document.createElement('li');
    const label = document.createElement('span');
    li.appendChild(label);
    li.dataset.path = (group.path === '/' ? '' : group.path) + '/' + name;
    ul.appendChild(li);
    let obj;
    try {
      obj = await group.get(name);
    } catch (e) {
      label.textContent = `${name} (${e.kind}: ${e.message})`;
      continue;
    }
    if (!obj) { label.textContent = `${name} (dangling link)`; continue; }
    const attrs = Object.values(obj.attrs || {});
    if (attrs.length) {
      const a = document.createElement('div');
      a.className = 'attrs';
      a.textContent = attrs.map((x) => `@${x.name} = ${fmtValue(x.value)}`).join('\n');
      a.style.whiteSpace = 'pre-wrap';
      li.appendChild(a);
    }
    if (obj.type === 'Group') {
      label.textContent = `▾ ${name}`;
      const sub = document.createElement('ul');
      li.appendChild(sub);
      if (depth < 6) await renderTree(obj, sub, depth + 1);
    } else if (obj.type === 'Dataset') {
      label.textContent = `${name} ${obj.shape ? obj.shape.join('×') : 'null'} ${obj.dtype}`;
      label.className = 'ds';
      label.onclick = () => select(obj);
      li.dataset.dataset = '1';
    } else {
      label.textContent = `${name} (datatype)`;
    }
  }
}

function describe(ds) {
  const f = ds.filters.map((x) => x.name).join(' → ') || 'none';
  return `${ds.path}\nshape ${JSON.stringify(ds.shape)}  dtype ${ds.dtype}  layout ${ds.layout}\nchunks ${JSON.stringify(ds.chunks)}  filters ${f}`;
}

/** The annotation drawn over dataset `ds`, when it is a medh5 image. */
function labelsFor(ds) {
  if (!state.sample) return null;
  const img = Object.values(state.sample.images).find((m) => m.dataset.path === ds.path);
  if (!img) return null;
  return Object.values(state.sample.annotations).find((a) => JSON.stringify(a.shape.slice(-3)) === JSON.stringify(ds.shape.slice(-3))) || null;
}

async function select(ds) {
  state.ds = ds;
  state.labels = labelsFor(ds);
  document.querySelectorAll('#tree span.sel').forEach((s) => s.classList.remove('sel'));
  const li = document.querySelector(`#tree li[data-path="${CSS.escape(ds.path)}"] > span`);
  if (li) li.classList.add('sel');
  $('info').textContent = describe(ds);
  const shape = ds.shape || [];
  const numeric = /^[<>|][iuf]\d$/.test(ds.dtype);
  if (!numeric || shape.length === 0) {
    $('controls').hidden = true;
    const v = await ds.value;
    $('info').textContent += `\nvalue ${fmtValue(v)}`;
    document.body.dataset.ready = '1';
    return;
  }
  const axis = $('axis');
  axis.innerHTML = '';
  if (shape.length >= 3) {
    for (let i = shape.length - 3; i < shape.length; i++) axis.add(new Option(`axis ${i}`, String(i)));
  }
  $('controls').hidden = shape.length < 2;
  state.lo = null;
  axis.value = String(Math.max(0, shape.length - 3));
  setIndexRange(Math.floor(shape[Number(axis.value)] / 2));
  await draw();
}

function setIndexRange(mid) {
  const shape = state.ds.shape;
  const ax = Number($('axis').value || 0);
  const idx = $('index');
  idx.max = String(shape.length >= 3 ? shape[ax] - 1 : 0);
  idx.value = String(mid);
}

/** The selection of the current view: one index along the chosen axis, leading axes at 0. */
function viewRanges() {
  const shape = state.ds.shape;
  if (shape.length < 3) return shape.map(() => []);
  const ax = Number($('axis').value);
  const i = Number($('index').value);
  return shape.map((d, k) => (k < shape.length - 3 ? [0] : k === ax ? [i] : []));
}

const CMAPS = {
  gray: (t) => [t * 255, t * 255, t * 255],
  hot: (t) => [Math.min(1, t * 3) * 255, Math.min(1, Math.max(0, t * 3 - 1)) * 255, Math.max(0, t * 3 - 2) * 255],
  viridis: (t) => [255 * (0.267 + t * (0.993 - 0.267) * t), 255 * (0.005 + 0.9 * t), 255 * (0.329 + 0.5 * Math.sin(Math.PI * t) - 0.2 * t)],
};
const LABEL_COLORS = [[0, 0, 0], [230, 60, 60], [60, 200, 80], [60, 110, 230], [230, 200, 40], [200, 60, 220]];

async function draw() {
  const ds = state.ds;
  const ticket = ++state.busy;
  document.body.dataset.ready = '';
  $('status').textContent = 'reading…';
  const shape = ds.shape;
  const ranges = viewRanges();
  const values = await ds.slice(ranges);
  let labels = null;
  if (state.labels && shape.length >= 3 && $('overlay').checked) {
    const lr = ranges.slice(-3);
    labels = await state.labels.labelmap(lr);
  }
  if (ticket !== state.busy) return;
  state.values = values;
  state.labelValues = labels ? labels.data : null;
  const plane = shape.length >= 2 ? shape.filter((_, k) => k >= shape.length - 3 && !(shape.length >= 3 && k === Number($('axis').value))).slice(-2) : null;
  state.plane = plane;
  const nums = Float64Array.from(values, Number);
  if (state.lo === null) {
    let lo = Infinity, hi = -Infinity;
    for (const v of nums) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (!(hi > lo)) { hi = lo + 1; }
    state.lo = lo; state.hi = hi;
    for (const id of ['level', 'window']) { $(id).min = id === 'window' ? '0' : String(lo); $(id).max = String(id === 'window' ? (hi - lo) * 2 : hi); }
    $('level').value = String((lo + hi) / 2);
    $('window').value = String(hi - lo);
  }
  if (shape.length === 1) plot(nums);
  else image(nums, plane[0], plane[1], labels ? labels.data : null);
  $('index-v').textContent = $('index').value;
  $('level-v').textContent = Number($('level').value).toFixed(1);
  $('window-v').textContent = Number($('window').value).toFixed(1);
  $('status').textContent = `${ds.path} ${JSON.stringify(ranges)} · ${(state.file.stats.bytesFetched / 1024).toFixed(0)} KiB fetched of ${(state.size || 0) / 1024 | 0} KiB`;
  document.body.dataset.bytesFetched = String(state.file.stats.bytesFetched);
  document.body.dataset.ready = '1';
}

function image(nums, h, w, labels) {
  const c = $('canvas');
  c.width = w; c.height = h;
  c.style.width = `${Math.min(768, w * Math.max(1, Math.floor(512 / w)))}px`;
  const ctx = c.getContext('2d');
  const img = ctx.createImageData(w, h);
  const level = Number($('level').value), win = Math.max(Number($('window').value), 1e-12);
  const lo = level - win / 2;
  const cmap = CMAPS[$('cmap').value];
  for (let i = 0; i < w * h; i++) {
    const t = Math.min(1, Math.max(0, (nums[i] - lo) / win));
    let [r, g, b] = cmap(t);
    const l = labels ? labels[i] : 0;
    if (l) {
      const lc = LABEL_COLORS[((l - 1) % (LABEL_COLORS.length - 1)) + 1];
      r = 0.5 * r + 0.5 * lc[0]; g = 0.5 * g + 0.5 * lc[1]; b = 0.5 * b + 0.5 * lc[2];
    }
    img.data.set([r, g, b, 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

function plot(nums) {
  const c = $('canvas');
  c.width = 800; c.height = 300; c.style.width = '800px';
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, c.width, c.height);
  let lo = Infinity, hi = -Infinity;
  for (const v of nums) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(hi > lo)) hi = lo + 1;
  ctx.strokeStyle = '#036'; ctx.beginPath();
  nums.forEach((v, i) => {
    const x = (i / Math.max(1, nums.length - 1)) * (c.width - 20) + 10;
    const y = c.height - 10 - ((v - lo) / (hi - lo)) * (c.height - 20);
    if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
  });
  ctx.stroke();
}

$('file').addEventListener('change', (e) => { const f = e.target.files[0]; if (f) { state.size = f.size; openSource(f); } });
$('open-url').addEventListener('click', () => openUrl($('url').value));
async function openUrl(u) {
  try { const r = await fetch(u, { method: 'HEAD' }); state.size = Number(r.headers.get('content-length')); } catch { state.size = 0; }
  openSource(u);
}
const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); const f = e.dataTransfer.files[0]; if (f) { state.size = f.size; openSource(f); } });
$('axis').addEventListener('change', () => { setIndexRange(Math.floor(state.ds.shape[Number($('axis').value)] / 2)); draw(); });
for (const id of ['index', 'level', 'window', 'cmap', 'overlay']) $(id).addEventListener('input', () => state.ds && draw());
const q = new URLSearchParams(location.search).get('url');
if (q) { $('url').value = q; openUrl(q); }
