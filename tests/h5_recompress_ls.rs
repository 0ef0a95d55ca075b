//! `h5 ls` shows each dataset's effective codec as `h5 recompress --dry-run`
//! detects it (`docs/neighbours.md` rows E3, E5): for Blosc2 the codec
//! and shuffle come from the first stored chunk's header, not from the
//! filter's client data. The file is written by h5py + hdf5plugin + blosc2
//! the way the esrf compressor writes it: a dataset created with the plugin's
//! default cd_values (BloscLZ, byte shuffle) whose chunks are direct-written
//! Blosc2 frames holding LZ4 + bitshuffle, next to a gzip + shuffle dataset,
//! an hdf5plugin Blosc2 zstd dataset and a contiguous one.

mod common;

use std::process::Command;

const GEN: &str = r#"
import sys, numpy as np, h5py, hdf5plugin, blosc2
out = sys.argv[1]
rng = np.random.default_rng(3)
d = rng.integers(0, 4000, size=(4, 64, 96), dtype='u2')
with h5py.File(out, 'w') as f:
    f.create_dataset('plain', data=d)
    f.create_dataset('gz', data=d, chunks=(1, 64, 96), shuffle=True, compression='gzip', compression_opts=4)
    f.create_dataset('zs', data=d, chunks=(1, 64, 96),
                     **hdf5plugin.Blosc2(cname='zstd', clevel=3, filters=hdf5plugin.Blosc2.SHUFFLE))
    x = f.create_dataset('lying', shape=d.shape, dtype=d.dtype, chunks=(1, 64, 96), compression=32026)
    cp = {'codec': blosc2.Codec.LZ4, 'clevel': 5, 'filters': [blosc2.Filter.BITSHUFFLE]}
    for z in range(d.shape[0]):
        b = blosc2.asarray(d[z][None], chunks=(1, 64, 96), blocks=(1, 64, 96), cparams=cp)
        x.id.write_direct_chunk((z, 0, 0), b.schunk.to_cframe(), filter_mask=0)
    print(list(x.id.get_create_plist().get_filter(0)[2]))
"#;

#[test]
fn ls_shows_the_effective_codec_read_from_the_chunks() {
    let Some(py) = common::oracle_python() else {
        println!("skipped: h5 ls effective codec (no oracle python)");
        return;
    };
    let probe = Command::new(&py)
        .args(["-c", "import h5py, hdf5plugin, blosc2"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        println!("skipped: h5 ls effective codec (oracle python lacks h5py/hdf5plugin/blosc2)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("purehdf-h5ls-codec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("codecs.h5");
    let gen = Command::new(&py)
        .args(["-c", GEN])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    // the DCPL of the direct-written dataset names BloscLZ (compressor slot 6 = 0)
    let cd = String::from_utf8_lossy(&gen.stdout);
    let cd: Vec<u32> = cd
        .trim()
        .trim_matches(['[', ']'])
        .split(',')
        .map(|t| t.trim().parse().unwrap())
        .collect();
    assert_eq!(cd.get(6), Some(&0), "cd_values {cd:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_h5"))
        .args(["ls", "-r"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let codec = |name: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("/{name}\t")))
            .unwrap_or_else(|| panic!("/{name} not listed:\n{text}"));
        line.rsplit('\t').next().unwrap().to_string()
    };
    assert_eq!(codec("plain"), "codec none");
    assert_eq!(codec("gz"), "codec shuffle+deflate");
    assert_eq!(codec("zs"), "codec blosc2:zstd:shuffle");
    assert_eq!(codec("lying"), "codec blosc2:lz4:bitshuffle");
    println!("h5 ls effective codec: 4/4 datasets (incl. lying cd_values) named from their chunks");
    let _ = std::fs::remove_dir_all(&dir);
}
