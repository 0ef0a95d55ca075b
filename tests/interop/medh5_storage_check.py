"""h5py checks for the storage tests (tests/medh5_collection.rs,
tests/medh5_amend.rs); prints one JSON object, exits 0.

  chunks A[:GROUP] B[:GROUP]   compare every dataset under A's GROUP (default /)
                               with B's at the raw chunk level: shape, dtype,
                               layout, filters, and per stored chunk its offset,
                               filter mask and bytes (id.read_direct_chunk)
  extras PATH                  add unknown objects to a reference sample: int32,
                               compound, committed-type and big-endian datasets,
                               attributes on each, a nested group, a root attr
  keep A B                     compare the unknown objects of A and B byte for
                               byte (raw stored chunks, types, attributes)
"""
import hashlib, json, sys

import h5py
import hdf5plugin  # noqa: F401
import numpy as np

EXTRA = ['ext', 'ext/nested', 'ext/nested/deeper', 'ext/i32', 'ext/cmp', 'ext/named',
         'ext/be', 'ext/nested/deeper/big', 'ext/nested/t']


def split(arg):
    path, _, group = arg.partition(':')
    return path, group or '/'


def describe(ds):
    out = {'shape': list(ds.shape), 'dtype': ds.dtype.str if ds.dtype.names is None else str(ds.dtype),
           'chunks': list(ds.chunks) if ds.chunks else None,
           'filters': sorted((str(k), str(v)) for k, v in ds._filters.items()),
           'attrs': {k: repr(ds.attrs[k]) for k in sorted(ds.attrs)}}
    if ds.chunks:
        chunks = []
        n = ds.id.get_num_chunks()
        for i in range(n):
            info = ds.id.get_chunk_info(i)
            mask, data = ds.id.read_direct_chunk(info.chunk_offset)
            chunks.append([list(info.chunk_offset), int(mask), hashlib.sha256(data).hexdigest()])
        out['chunk_list'] = chunks
    else:
        out['data'] = hashlib.sha256(ds[()].tobytes() if ds.dtype.kind != 'O' else repr(ds[()]).encode()).hexdigest()
    return out


def walk(f, group):
    g = f[group]
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            found[name] = describe(obj)
        elif isinstance(obj, h5py.Group):
            found[name + '/'] = {k: repr(obj.attrs[k]) for k in sorted(obj.attrs)}
    g.visititems(visit)
    return found


def chunks(a, b):
    (pa, ga), (pb, gb) = split(a), split(b)
    with h5py.File(pa) as fa, h5py.File(pb) as fb:
        wa, wb = walk(fa, ga), walk(fb, gb)
    diffs = [k for k in sorted(set(wa) | set(wb)) if wa.get(k) != wb.get(k)]
    n = sum(len(v.get('chunk_list', [])) for v in wa.values() if isinstance(v, dict))
    print(json.dumps({'objects': len(wa), 'chunks': n, 'diffs': diffs[:20]}))


def extras(path):
    with h5py.File(path, 'a') as f:
        g = f.create_group('ext')
        g.attrs['note'] = np.int32(7)
        d = g.create_dataset('i32', data=np.arange(40000, dtype=np.int32).reshape(200, 200),
                             chunks=(50, 100), compression='gzip')
        d.attrs['units'] = 'count'
        d.attrs['vec'] = np.array([1.5, 2.5], '>f8')
        ct = np.dtype([('a', '<i4'), ('b', '<f8'), ('c', 'S4')])
        d = g.create_dataset('cmp', data=np.array([(i, i / 2, b'x%d' % i) for i in range(50)], ct))
        d.attrs['kind'] = np.array([(1, 2.0, b'ab')], ct)
        g['t'] = np.dtype('<i2')
        g['t'].attrs['on_type'] = 'yes'
        d = g.create_dataset('named', data=np.arange(30, dtype='<i2'), dtype=g['t'])
        d.attrs['n'] = 1
        d = g.create_dataset('be', data=np.arange(100000, dtype='>f4'), chunks=(25000,))
        d.attrs['order'] = 'big'
        n = g.create_group('nested/deeper')
        n.attrs['depth'] = 2
        d = n.create_dataset('big', data=np.ones((300, 300), '<u2'), chunks=(100, 100), shuffle=True,
                             compression='lzf')
        d.attrs['x'] = np.arange(3, dtype='<u8')
        f['images/CT'].attrs['x_vendor'] = 'keep me'
        f.attrs['x_site'] = 'site-7'
    print(json.dumps({'ok': True}))


def keep(a, b):
    with h5py.File(a) as fa, h5py.File(b) as fb:
        wa, wb = walk(fa, '/ext'), walk(fb, '/ext')
        extra = {'root x_site': (fa.attrs.get('x_site'), fb.attrs.get('x_site')),
                 'CT x_vendor': (fa['images/CT'].attrs.get('x_vendor'), fb['images/CT'].attrs.get('x_vendor')),
                 'ext attrs': (dict(fa['ext'].attrs), dict(fb['ext'].attrs))}
        named = fb['ext/named'].id.get_type().committed()
    diffs = [k for k in sorted(set(wa) | set(wb)) if wa.get(k) != wb.get(k)]
    diffs += [k for k, (x, y) in extra.items() if repr(x) != repr(y)]
    print(json.dumps({'objects': len(wa), 'diffs': diffs, 'named_committed': bool(named)}))


cmd = sys.argv[1]
{'chunks': lambda: chunks(sys.argv[2], sys.argv[3]), 'extras': lambda: extras(sys.argv[2]),
 'keep': lambda: keep(sys.argv[2], sys.argv[3])}[cmd]()
