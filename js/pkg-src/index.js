// purehdf: HDF5 and medh5 in JavaScript (WebAssembly, no libhdf5).
// The wasm module does the format work; this file is the h5wasm-shaped API
// and the host side of lazy reads: every call on a lazy source (a URL read
// with HTTP range requests, a Blob read with blob.slice) is attempted in
// wasm, which either finishes or names the byte ranges it needs; those are
// fetched concurrently, supplied, and the call attempted again.
import init, { WasmFile, WasmWriter } from './purehdf_js.js';

let ready = null;

/** Load the WebAssembly module (done by every entry point; call it early to overlap the download). */
export function ready_() {
  if (!ready) {
    ready = (async () => {
      const url = new URL('./purehdf_js_bg.wasm', import.meta.url);
      if (typeof process !== 'undefined' && process.versions && process.versions.node && url.protocol === 'file:') {
        const { readFile } = await import('node:fs/promises');
        await init({ module_or_path: await readFile(url) });
      } else {
        await init({ module_or_path: url });
      }
    })();
  }
  return ready;
}
export { ready_ as ready };

const MAX_ROUNDS = 256;
const IN_FLIGHT = 16;

function jsError(kind, message) {
  const e = new Error(message);
  e.kind = kind;
  return e;
}

/** Run `n` async jobs at most `limit` at a time; results in order. */
async function pool(n, limit, job) {
  const out = new Array(n);
  let next = 0;
  async function worker() {
    while (next < n) {
      const i = next++;
      out[i] = await job(i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
  return out;
}

/** Byte ranges of an HTTP(S) URL, pinned to the ETag seen first. */
class HttpReader {
  constructor(url, opts) {
    this.url = String(url);
    this.fetch = (opts && opts.fetch) || globalThis.fetch.bind(globalThis);
    this.etag = null;
    this.size = 0;
  }
  async init() {
    let r = await this.fetch(this.url, { method: 'HEAD' });
    let len = Number(r.headers.get('content-length'));
    if (!r.ok || !Number.isFinite(len) || r.headers.get('content-length') === null) {
      r = await this.fetch(this.url, { headers: { Range: 'bytes=0-0' } });
      const cr = r.headers.get('content-range');
      const m = cr && /\/(\d+)$/.exec(cr);
      if (r.status !== 206 || !m) throw jsError('Remote', `${this.url}: no length (HTTP ${r.status})`);
      len = Number(m[1]);
      await r.arrayBuffer();
    }
    this.etag = r.headers.get('etag');
    this.size = len;
    return this;
  }
  async read(offset, length) {
    const end = offset + length - 1;
    const headers = { Range: `bytes=${offset}-${end}` };
    if (this.etag) headers['If-Match'] = this.etag;
    const r = await this.fetch(this.url, { headers });
    if (r.status === 412) throw jsError('StaleSnapshot', `${this.url}: the object changed since it was opened`);
    if (r.status === 200 && offset === 0 && length === this.size) {
      const b = new Uint8Array(await r.arrayBuffer());
      if (b.length !== length) throw jsError('Remote', `${this.url}: ${b.length} bytes for ${length}`);
      return b;
    }
    if (r.status !== 206) throw jsError('Remote', `${this.url}: HTTP ${r.status} for bytes ${offset}-${end}`);
    const cr = r.headers.get('content-range');
    const m = cr && /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(cr.trim());
    if (!m || Number(m[1]) !== offset || Number(m[2]) !== end) {
      throw jsError('Remote', `${this.url}: Content-Range ${cr} for bytes ${offset}-${end}`);
    }
    const tag = r.headers.get('etag');
    if (this.etag && tag && tag !== this.etag) throw jsError('StaleSnapshot', `${this.url}: the object changed since it was opened`);
    const b = new Uint8Array(await r.arrayBuffer());
    if (b.length !== length) throw jsError('Remote', `${this.url}: ${b.length} bytes for ${length}`);
    return b;
  }
}

/** Byte ranges of a Blob (or File), read slice by slice. */
class BlobReader {
  constructor(blob) {
    this.blob = blob;
    this.size = blob.size;
    this.url = blob.name || 'blob';
  }
  async init() { return this; }
  async read(offset, length) {
    const b = new Uint8Array(await this.blob.slice(offset, offset + length).arrayBuffer());
    if (b.length !== length) throw jsError('Remote', `${this.url}: ${b.length} bytes for ${length}`);
    return b;
  }
}

/** The wasm file and, for a lazy source, its reader and counters. */
class Handle {
  constructor(wasm, reader, opts) {
    this.wasm = wasm;
    this.reader = reader;
    this.onProgress = opts && opts.onProgress;
    this.stats = { bytesFetched: 0, requests: 0, rounds: 0 };
  }
  /** `op()` until it needs no more bytes. */
  async run(op) {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        return op();
      } catch (e) {
        if (!e || e.kind !== 'NeedBytes' || !this.reader) throw e;
        await this.fetchRanges(e.ranges);
      }
    }
    throw jsError('Limit', `more than ${MAX_ROUNDS} rounds of byte ranges`);
  }
  async fetchRanges(ranges) {
    this.stats.rounds++;
    const total = ranges.reduce((s, r) => s + r[1], 0);
    let done = 0;
    const report = () => this.onProgress && this.onProgress({ done, total, ...this.stats });
    report();
    const bufs = await pool(ranges.length, IN_FLIGHT, async (i) => {
      const [off, len] = ranges[i];
      const b = await this.reader.read(off, len);
      this.stats.bytesFetched += len;
      this.stats.requests++;
      done += len;
      report();
      return b;
    });
    ranges.forEach(([off], i) => this.wasm.supply(off, bufs[i]));
  }
}

function joinPath(base, name) {
  if (name.startsWith('/')) return name;
  return (base.endsWith('/') ? base : base + '/') + name;
}

function attrsObject(list) {
  const out = {};
  for (const a of list) out[a.name] = a;
  return out;
}

/** A group (the file is its root group). */
export class Group {
  constructor(h, path, links, attrs) {
    this._h = h;
    this.path = path;
    this.type = 'Group';
    this.links = links;
    this.attrs = attrsObject(attrs);
  }
  /** Names of the group's links, in creation order where tracked. */
  keys() { return this.links.map((l) => l.name); }
  /** The object at `path` (relative to this group, or absolute): a Group, Dataset or Datatype; null when absent. */
  async get(path) {
    const p = joinPath(this.path, path);
    const h = this._h;
    let kind;
    try {
      kind = await h.run(() => h.wasm.kind(p));
    } catch (e) {
      if (e && e.kind === 'NotFound') return null;
      throw e;
    }
    const attrs = await h.run(() => h.wasm.attrs(p));
    if (kind === 'group') return new Group(h, p, await h.run(() => h.wasm.links(p)), attrs);
    if (kind === 'dataset') return new Dataset(h, p, await h.run(() => h.wasm.info(p)), attrs);
    return { type: 'Datatype', path: p, attrs: attrsObject(attrs) };
  }
}

function normaliseRanges(shape, ranges) {
  const start = [], count = [], step = [];
  shape.forEach((dim, i) => {
    const r = (ranges && ranges[i]) || [];
    let [a, b, s] = r;
    a = a == null ? 0 : a < 0 ? a + dim : a;
    if (r.length === 1) b = a + 1;
    b = b == null ? dim : b < 0 ? b + dim : Math.min(b, dim);
    s = s == null ? 1 : s;
    if (!(s >= 1)) throw jsError('InvalidArgument', 'step must be at least 1');
    start.push(a);
    count.push(b > a ? Math.ceil((b - a) / s) : 0);
    step.push(s);
  });
  return { start, count, step };
}

/** A dataset: metadata now, values on request. */
export class Dataset {
  constructor(h, path, info, attrs) {
    this._h = h;
    this.path = path;
    this.type = 'Dataset';
    this.shape = info.shape;
    this.maxshape = info.maxshape;
    this.dtype = info.dtype;
    this.metadata = info.metadata;
    this.chunks = info.chunks;
    this.filters = info.filters;
    this.layout = info.layout;
    this.attrs = attrsObject(attrs);
  }
  /** The values of `ranges` (one `[start, stop, step]` per axis, `[]` the whole axis, `[i]` one index) in C order. */
  async slice(ranges) {
    if (this.shape === null) return null;
    const { start, count, step } = normaliseRanges(this.shape, ranges);
    const h = this._h;
    return h.run(() => h.wasm.read(this.path, start, count, step));
  }
  /** Every value (a scalar's one value). */
  get value() {
    return this.slice([]).then((v) => (v !== null && this.shape.length === 0 ? v[0] : v));
  }
}

/** An open file: the root group plus `close()` and the fetch counters. */
export class File extends Group {
  constructor(h, links, attrs) {
    super(h, '/', links, attrs);
    this.filename = h.wasm.name;
  }
  /** Bytes and requests fetched so far (lazy sources). */
  get stats() { return { ...this._h.stats }; }
  /** Release the wasm memory of the file. */
  close() { this._h.wasm.free(); }
}

async function openHandle(source, opts) {
  await ready_();
  let reader = null;
  let wasm;
  if (source instanceof ArrayBuffer) {
    wasm = WasmFile.fromBytes(new Uint8Array(source));
  } else if (ArrayBuffer.isView(source)) {
    wasm = WasmFile.fromBytes(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  } else if (typeof Blob !== 'undefined' && source instanceof Blob) {
    reader = await new BlobReader(source).init();
  } else if (typeof source === 'string' || source instanceof URL) {
    reader = await new HttpReader(source, opts).init();
  } else {
    throw jsError('InvalidArgument', 'open(): an ArrayBuffer, typed array, Blob/File or URL');
  }
  if (reader) wasm = WasmFile.lazy(reader.size, reader.url);
  const h = new Handle(wasm, reader, opts);
  await h.run(() => wasm.open());
  return h;
}

/**
 * Open an HDF5 file: `source` is an ArrayBuffer or typed array (bytes), a
 * Blob/File (read slice by slice), or a URL (read with HTTP range requests).
 * `options.onProgress({done, total, bytesFetched, requests})` reports fetches.
 */
export async function open(source, options) {
  const h = await openHandle(source, options);
  const links = await h.run(() => h.wasm.links('/'));
  const attrs = await h.run(() => h.wasm.attrs('/'));
  return new File(h, links, attrs);
}

/** A medh5 image or annotation. */
class Member {
  constructor(h, id, ds) {
    this._h = h;
    this.id = id;
    this.dataset = ds;
    this.shape = ds.shape;
    this.dtype = ds.dtype;
  }
  /** The voxels of the box `roi` (`[[start, stop], ...]` per axis; omitted: all). */
  read(roi) { return this.dataset.slice(roi || []); }
}

/** A medh5 annotation: its voxels and its labelmap. */
class Annotation extends Member {
  /** The annotation decoded to one uint16 label volume over `roi`: `{shape, data}`. */
  labelmap(roi) {
    const h = this._h;
    let start = [], count = [];
    if (roi) {
      const shape = this.shape.slice(-roi.length);
      const n = normaliseRanges(shape, roi);
      start = n.start;
      count = n.count;
    }
    return h.run(() => h.wasm.labelmap(this.id, start, count));
  }
}

/** An open medh5 sample. */
export class Sample {
  constructor(file, info, images, annotations) {
    this.file = file;
    this.content_id = info.content_id;
    this.attrs = info.attrs;
    this.meta = info.meta;
    this.identity = (info.meta && info.meta.identity) || {};
    this.grids = info.grids;
    this.images = images;
    this.annotations = annotations;
  }
  /** Check the stored digests and `content_id`: the report (`ok` …). */
  verify() { const h = this.file._h; return h.run(() => h.wasm.verify()); }
  /** Validate the sample: the report as `medh5 validate --json` prints it. */
  validate() { const h = this.file._h; return h.run(() => h.wasm.validate()); }
  /** Recompute the `content_id` from the stored digests. */
  computeContentId() { const h = this.file._h; return h.run(() => h.wasm.computeContentId()); }
  close() { this.file.close(); }
}

/** Open a medh5 sample (sources as `open`); refused unless self-contained. */
export async function openSample(source, options) {
  const file = await open(source, options);
  const h = file._h;
  const info = await h.run(() => h.wasm.sampleInfo());
  const images = {}, annotations = {};
  for (const id of info.images) {
    const p = await h.run(() => h.wasm.imagePath(id));
    images[id] = new Member(h, id, await file.get(p.startsWith('/') ? p : '/' + p));
  }
  for (const id of info.annotations) {
    const p = await h.run(() => h.wasm.annotationPath(id));
    annotations[id] = new Annotation(h, id, await file.get(p.startsWith('/') ? p : '/' + p));
  }
  return new Sample(file, info, images, annotations);
}

const TYPED = [
  [Float64Array, '<f8'], [Float32Array, '<f4'], [BigInt64Array, '<i8'], [BigUint64Array, '<u8'],
  [Int32Array, '<i4'], [Uint32Array, '<u4'], [Int16Array, '<i2'], [Uint16Array, '<u2'],
  [Int8Array, '|i1'], [Uint8Array, '|u1'], [Uint8ClampedArray, '|u1'],
];

/** The dtype and payload of `data` (typed array, array of numbers or strings, number, string). */
function payload(data, dtype) {
  if (typeof data === 'string') data = [data];
  if (typeof data === 'number') data = [data];
  if (typeof data === 'bigint') data = [data];
  if (Array.isArray(data) && (dtype === 'str' || (!dtype && typeof data[0] === 'string'))) {
    return { dtype: 'str', strings: data.map(String) };
  }
  if (Array.isArray(data)) {
    const T = { '<f8': Float64Array, '<f4': Float32Array, '<i8': BigInt64Array, '<u8': BigUint64Array, '<i4': Int32Array, '<u4': Uint32Array, '<i2': Int16Array, '<u2': Uint16Array, '|i1': Int8Array, '|u1': Uint8Array }[dtype || '<f8'];
    if (!T) throw jsError('InvalidArgument', `dtype ${dtype} for an array of numbers`);
    data = T === BigInt64Array || T === BigUint64Array ? T.from(data, BigInt) : T.from(data);
  }
  const m = TYPED.find(([T]) => data instanceof T);
  if (!m) throw jsError('InvalidArgument', 'data: a typed array, an array of numbers or strings');
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  return { dtype: dtype || m[1], bytes, n: data.length };
}

/** An HDF5 file written into memory: groups, datasets, attributes, then `toBytes()`. */
export class FileWriter {
  constructor() {
    if (!ready) throw jsError('InvalidArgument', 'await ready() before new FileWriter()');
    this._w = new WasmWriter();
    this._ids = new Map([['/', 0]]);
  }
  _id(path) {
    const id = this._ids.get(path.startsWith('/') ? path : '/' + path);
    if (id === undefined) throw jsError('NotFound', `no object ${path} written`);
    return id;
  }
  _parent(name) {
    const p = name.startsWith('/') ? name : '/' + name;
    const i = p.lastIndexOf('/');
    return [p, i === 0 ? '/' : p.slice(0, i), p.slice(i + 1)];
  }
  /** Create group `name` (a path; its parent must exist). */
  createGroup(name) {
    const [p, parent, leaf] = this._parent(name);
    this._ids.set(p, this._w.createGroup(this._id(parent), leaf));
    return this;
  }
  /** Create a dataset: `{name, data, shape, dtype, chunks, filters}`; `filters` like `['gzip', 4]` or `[['shuffle'], ['zstd', 3]]`. */
  createDataset({ name, data, shape, dtype, chunks, filters }) {
    const [p, parent, leaf] = this._parent(name);
    const d = payload(data, dtype);
    const n = d.strings ? d.strings.length : d.n;
    const s = shape || (typeof data === 'string' || typeof data === 'number' ? [] : [n]);
    let fl = filters || [];
    if (fl.length && !Array.isArray(fl[0])) fl = [fl];
    if (typeof filters === 'string') fl = [[filters]];
    this._ids.set(p, this._w.createDataset(this._id(parent), leaf, d.dtype, s, chunks || [], fl, d.bytes, d.strings));
    return this;
  }
  /** Set attribute `name` of the object at `path` to `value` (typed array, numbers, strings). */
  setAttribute(path, name, value, { shape, dtype } = {}) {
    const d = payload(value, dtype);
    const n = d.strings ? d.strings.length : d.n;
    const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
    this._w.setAttr(this._id(path), name, d.dtype, shape || (scalar ? [] : [n]), d.bytes, d.strings);
    return this;
  }
  /** The file's bytes (the writer is finished). */
  toBytes() { return this._w.toBytes(); }
}
