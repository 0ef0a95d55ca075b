"""Every random h5py file of the project's generator reads through purehdf
exactly as through h5py: structure, links, dtypes, shapes, properties,
attributes, values and random selections."""

import os
import random

import pytest

from conftest import need

COUNT = int(os.environ.get("PUREHDF_PY_RANDOM_FILES", "300"))


def test_random_files_read_as_h5py(tmp_path, gen_random):
    need("h5py")
    import purehdf
    from compare import compare_files

    checked, problems = 0, []
    for i in range(COUNT):
        p = str(tmp_path / ("f%03d.h5" % i))
        gen_random.gen_one(p, random.Random(4242 * 1_000_003 + i))
        with purehdf.File(p) as pf:
            d = compare_files(p, pf, seed=i)
        # the same file from bytes
        if i % 10 == 0:
            with open(p, "rb") as fh:
                with purehdf.File(fh.read()) as pf:
                    d2 = compare_files(p, pf, seed=i + 1)
            d.checked += d2.checked
            d.problems += d2.problems
        checked += d.checked
        problems += ["f%03d %s" % (i, x) for x in d.problems]
    print("random files: %d files, %d comparisons, %d differences"
          % (COUNT, checked, len(problems)))
    assert COUNT >= 1 and checked > COUNT * 50
    assert problems == [], "\n".join(problems[:30])
