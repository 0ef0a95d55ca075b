//! Chunking (§6.4 table, oracle random table, §6.5) and profile pipelines (§6.1).

use super::*;

// ---------------------------------------------------------------------------
// Chunking: §6.4 table, oracle-generated random table, §6.5 guess_chunk.

#[test]
fn optimiser_matches_spec_table() {
    const L3S: [u64; 3] = [1_441_792, 262_144, 16_777_216];
    #[allow(clippy::type_complexity)]
    let table: &[(&[u64], Option<&[i64]>, u64, [&[u64]; 3])] = &[
        (
            &[512, 512, 512],
            None,
            2,
            [&[128, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            4,
            [&[128, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            1,
            [&[128, 64, 64], &[128, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            8,
            [&[64, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            Some(&[96, 96, 96]),
            2,
            [&[128, 128, 128]; 3],
        ),
        (&[512, 512, 512], Some(&[96, 96, 96]), 4, [&[96, 96, 96]; 3]),
        (
            &[512, 512, 512],
            Some(&[128, 128, 128]),
            4,
            [&[64, 128, 128]; 3],
        ),
        (
            &[600, 600, 600],
            Some(&[160, 160, 160]),
            2,
            [&[80, 160, 160]; 3],
        ),
        (
            &[300, 512, 512],
            Some(&[48, 160, 160]),
            4,
            [&[24, 160, 160]; 3],
        ),
        (
            &[64, 512, 512],
            Some(&[32, 128, 128]),
            2,
            [&[64, 128, 128], &[32, 128, 128], &[64, 128, 128]],
        ),
        (
            &[120, 256, 256],
            None,
            2,
            [&[120, 64, 64], &[64, 64, 64], &[120, 64, 64]],
        ),
        (&[32, 64, 64], None, 2, [&[32, 64, 64]; 3]),
        (&[16, 24, 24], Some(&[8, 8, 8]), 2, [&[16, 8, 8]; 3]),
        (&[2048, 2048], None, 1, [&[128, 64]; 3]),
        (&[4096, 4096], Some(&[256, 256]), 2, [&[512, 256]; 3]),
        (&[1000, 1000], None, 4, [&[128, 64]; 3]),
        (&[40, 600, 600], None, 2, [&[40, 128, 64]; 3]),
        (
            &[512, 512, 96],
            Some(&[96, 96, 16]),
            4,
            [&[128, 128, 16]; 3],
        ),
    ];
    for (shape, patch, itemsize, want) in table {
        for (l3, w) in L3S.iter().zip(want) {
            let p = patch.map_or(Patch::Default, Patch::PerAxis);
            let got = chunking::spatial_chunk_for(shape, p, *itemsize, *l3).unwrap();
            assert_eq!(got, *w, "{shape:?} {patch:?} x{itemsize} L3={l3}");
        }
    }
}

#[test]
fn optimiser_matches_oracle_random_table() {
    let text = std::fs::read_to_string(data_dir().join("chunk_table.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let u = |x: &serde_json::Value| -> Vec<u64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_u64().unwrap())
            .collect()
    };
    let cases = v["spatial_chunk_for"].as_array().unwrap();
    assert!(cases.len() >= 400);
    for c in cases {
        let shape = u(&c["shape"]);
        let axes: Vec<i64>;
        let patch = match &c["patch"] {
            serde_json::Value::Null => Patch::Default,
            serde_json::Value::Number(n) => Patch::Uniform(n.as_i64().unwrap()),
            a => {
                axes = a
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_i64().unwrap())
                    .collect();
                Patch::PerAxis(&axes)
            }
        };
        let got = chunking::spatial_chunk_for(
            &shape,
            patch,
            c["itemsize"].as_u64().unwrap(),
            c["l3"].as_u64().unwrap(),
        )
        .unwrap();
        assert_eq!(got, u(&c["chunk"]), "{c}");
    }
    for c in v["guess_chunk"].as_array().unwrap() {
        let got = chunking::guess_chunk(&u(&c["shape"]), c["itemsize"].as_u64().unwrap());
        assert_eq!(got, u(&c["chunk"]), "{c}");
    }
}

// ---------------------------------------------------------------------------
// Profiles: §6.1 pipelines equal what the reference's vector files carry.

#[test]
fn profile_pipelines_match_vector_files() {
    let fx = fixture();
    let files = [
        ("v2_balanced.medh5", Profile::Balanced),
        ("v2_training.medh5", Profile::Training),
        ("v2_archive.medh5", Profile::Archive),
        ("v2_portable.medh5", Profile::Portable),
        ("v3_stacked_index.medh5", Profile::Balanced),
    ];
    let mut checked = 0;
    for (name, profile) in files {
        for ds in fx[name]["datasets"].as_array().unwrap() {
            let path = ds["path"].as_str().unwrap();
            let shape: Vec<u64> = ds["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            let es: u32 = ds["dtype"].as_str().unwrap()[2..].parse().unwrap();
            let contiguous = purehdf_medh5::profiles::is_contiguous(&shape, u64::from(es));
            assert_eq!(contiguous, ds["chunks"].is_null(), "{name} {path}");
            if contiguous {
                assert!(ds["filters"].as_array().unwrap().is_empty());
                continue;
            }
            let chunks: Vec<u64> = ds["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            let mine = profile
                .codec(Role::for_path(path))
                .pipeline(es, &chunks)
                .unwrap();
            let theirs = ds["filters"].as_array().unwrap();
            assert_eq!(mine.len(), theirs.len(), "{name} {path}");
            for (m, t) in mine.iter().zip(theirs) {
                assert_eq!(u64::from(m.id), t["id"].as_u64().unwrap());
                assert_eq!(u64::from(m.flags), t["flags"].as_u64().unwrap());
                let cd: Vec<u32> = t["cd_values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_u64().unwrap() as u32)
                    .collect();
                assert_eq!(m.cd_values, cd, "{name} {path}");
                assert_eq!(m.name.as_deref(), t["name"].as_str());
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * 4 + 5);
}
