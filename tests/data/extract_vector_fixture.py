"""Extract from the reference's vector files (shared/vectors/medh5/*.medh5) what
the Rust tests compare against: /meta text, root/grid/image/annotation attributes
(name, numpy dtype, shape, value), and every dataset's dtype, shape, chunks,
filter pipeline (id, flags, cd_values, name) and digest.

Run: .oracle-venv/bin/python extract_vector_fixture.py  -> vector_fixture.json
"""
import json, os, glob
import numpy as np, h5py

HERE = os.path.dirname(os.path.abspath(__file__))
VEC = os.path.join(HERE, '..', '..', '..', 'shared', 'vectors', 'medh5')

def val(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return [x.decode() if isinstance(x, bytes) else x for x in v.ravel().tolist()]
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v

def attrs(obj):
    out = []
    for name in obj.attrs:
        a = obj.attrs.get_id(name)
        v = obj.attrs[name]
        out.append({'name': name, 'dtype': str(a.dtype), 'shape': list(a.shape), 'value': val(v)})
    return out

def pipeline(ds):
    dcpl = ds.id.get_create_plist()
    return [dict(zip(('id', 'flags', 'cd_values', 'name'), (f[0], f[1], list(f[2]), f[3].decode())))
            for f in (dcpl.get_filter(i) for i in range(dcpl.get_nfilters()))]

out = {}
for p in sorted(glob.glob(os.path.join(VEC, '*.medh5'))):
    f = h5py.File(p, 'r')
    entry = {'root_attrs': attrs(f), 'meta': f['meta'][()].decode(), 'objects': [], 'datasets': []}
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            if name == 'meta':
                return
            d = obj.attrs.get('digest')
            entry['datasets'].append({'path': name, 'dtype': obj.dtype.str, 'shape': list(obj.shape),
                                      'chunks': list(obj.chunks) if obj.chunks else None,
                                      'filters': pipeline(obj),
                                      'digest': d.decode() if isinstance(d, bytes) else d,
                                      'attrs': attrs(obj)})
        top = name.split('/')
        if len(top) == 2 and top[0] in ('grids', 'images', 'annotations', 'transforms'):
            entry['objects'].append({'path': name, 'attrs': attrs(obj)})
    f.visititems(visit)
    out[os.path.basename(p)] = entry
with open(os.path.join(HERE, 'vector_fixture.json'), 'w') as fh:
    json.dump(out, fh, indent=1, ensure_ascii=False)
    fh.write('\n')
