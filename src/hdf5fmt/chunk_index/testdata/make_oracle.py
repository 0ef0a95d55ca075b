# Dev-time generator of chunk_index/testdata/oracle_chunks.json (h5py as oracle).
import json, csv, sys, os
import h5py, hdf5plugin  # noqa
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '../../../../../shared/corpus')
rows = list(csv.DictReader(open(f'{corpus}/MANIFEST.tsv'), delimiter='\t'))
want = []
for r in rows:
    ci = r['chunk_index']
    if not ci or r['h5py_reads_all'] != 'yes':
        continue
    if ci == 'btree_v1' and len([w for w in want if w[1] == 'btree_v1']) >= 25:
        continue
    want.append((r['path'], ci))
out = []
for path, _ in want:
    exp = json.load(open(f'{corpus}/expected/{path}.json'))
    try:
        f = h5py.File(f'{corpus}/{path}', 'r')
    except Exception as e:
        continue
    for o in exp['objects']:
        if o.get('kind') != 'dataset' or o.get('layout') != 'chunked':
            continue
        try:
            d = f[o['path']]
            n = d.id.get_num_chunks()
            if n > 5000:
                continue
            recs = []
            for i in range(n):
                ci = d.id.get_chunk_info(i)
                recs.append([list(ci.chunk_offset), ci.filter_mask, ci.byte_offset, ci.size])
            pl = d.id.get_create_plist()
            filters = [[f[0], f[1], list(f[2])] for f in (pl.get_filter(k) for k in range(pl.get_nfilters()))]
        except Exception as e:
            print('skip', path, o['path'], e, file=sys.stderr)
            continue
        out.append(dict(file=path, path=o['path'], shape=list(d.shape), maxshape=[m for m in d.maxshape],
                        chunks=list(d.chunks), itemsize=d.dtype.itemsize, index=o.get('chunk_index'),
                        filters=filters, hash_kind=o.get('hash_kind'), sha256=o.get('sha256'),
                        records=recs))
json.dump(out, open(sys.argv[1], 'w'), separators=(',', ':'))
print(len(out), 'datasets', file=sys.stderr)
import collections
print(collections.Counter(x['index'] for x in out), file=sys.stderr)
