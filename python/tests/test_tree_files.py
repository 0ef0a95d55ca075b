"""The project's experiment-tree generator (tests/interop/gen_tree.py:
virtual datasets, external and soft links, Blosc2 stacks, NeXus-like
files) reads through purehdf as through h5py."""

import glob
import os
import subprocess
import sys

from conftest import INTEROP, need


def test_tree_files_read_as_h5py(tmp_path):
    need("h5py")
    need("hdf5plugin")
    import purehdf
    from compare import compare_files
    out = str(tmp_path / "tree")
    subprocess.run([sys.executable, os.path.join(INTEROP, "gen_tree.py"), out, "--files", "12",
                    "--frames", "4"], check=True, capture_output=True)
    files = sorted(glob.glob(os.path.join(out, "**", "*.h5"), recursive=True))
    assert len(files) >= 10
    here = os.getcwd()
    checked, problems = 0, []
    try:
        for p in files:
            # virtual and external links name their files relative to here
            os.chdir(os.path.dirname(p))
            with purehdf.File(p) as pf:
                d = compare_files(p, pf)
            checked += d.checked
            problems += ["%s %s" % (os.path.relpath(p, out), x) for x in d.problems]
    finally:
        os.chdir(here)
    print("tree files: %d files, %d comparisons, %d differences"
          % (len(files), checked, len(problems)))
    assert checked > 500
    assert problems == [], "\n".join(problems[:20])
