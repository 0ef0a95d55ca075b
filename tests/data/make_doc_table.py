"""Generate doc_table.json: sample documents (as JSON input) -> the reference
engine's `/meta` serialisation (`SampleDocument.from_json(doc).dumps()`,
medh5 2.2.3 `_core`). Run: .oracle-venv/bin/python make_doc_table.py"""
import json, os
from medh5 import _core

ID = {'sample_id': 's', 'subject_id': 'u'}
TP = [{'id': 'tp0', 'index': 0}]
docs = [
    {'identity': {'sample_id': 'v1', 'subject_id': 'SUBJ-1'}, 'timepoints': TP},
    {'timepoints': [{'description': 'd', 'subject_age_years': 40.5, 'study_uid': '9', 'days_from_baseline': 3,
                     'date': '2020-01-01', 'label': 'L', 'index': 0, 'id': 'tp0'},
                    {'id': 'tp1', 'index': 1, 'days_from_baseline': 7.5, 'series_uids': {'CT': '1.2.3'}}],
     'identity': {'zz': 1, 'bodypart': 'chest', 'sample_id': 'caf\u00e9 \u2603', 'laterality': 'left',
                  'subject_id': 'u"\\\t\x01', 'sex': 'F', 'aa': 'x\u00e9\n'},
     'cohort': {'x_extra': 1, 'group_id': 'g', 'acquisition_protocol': 'p', 'scanner_id': 'sc', 'site_id': 's',
                'dataset_id': 'd'},
     'extra': {'b': 1, 'a': [1.5, 1e-07, 1e16, 0.1, -0.0, 123456789.125]}},
    {'identity': ID, 'timepoints': TP,
     'label_set': {'form': 'inline', 'version': '1.0.0', 'id': 'L',
                   'classes': [{'properties': {'p': 1}, 'laterality': 'left',
                                'codes': [{'system': 'SCT', 'code': '10200004'}],
                                'color': [1, 2, 3, 255], 'category': 'organ', 'parents': [2], 'name': 'A',
                                'key': 'a', 'id': 1},
                               {'id': 2, 'key': 'b', 'name': 'B \u00fc'}],
                   'relations': [{'subject': 2, 'predicate': 'part_of', 'object': 1},
                                 {'subject': 1, 'predicate': 'adjacent_to', 'object': 2}]}},
    {'identity': ID, 'timepoints': TP,
     'label_set': {'form': 'ref', 'uri': 'https://example.org/ls.json', 'sha256': 'ab' * 32, 'version': '2',
                   'id': 'R'}},
    {'identity': {'sample_id': 'v1b', 'subject_id': 'SUBJ-1'}, 'timepoints': TP,
     'label_set': {'id': 'demo-organs', 'version': '1.0.0', 'form': 'inline',
                   'classes': [{'id': 1, 'key': 'liver', 'name': 'Liver'}, {'id': 2, 'key': 'spleen', 'name': 'Spleen'},
                               {'id': 3, 'key': 'kidney', 'name': 'Kidney'}]}},
]
out = [{'input': d, 'meta': _core.SampleDocument.from_json(d).dumps()} for d in docs]
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'doc_table.json'), 'w') as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write('\n')
for o in out:
    print(o['meta'])
