//! Writing the virtual dataset mapping list (HDF5 File Format Specification
//! IV.A.2.i, the global heap object a version-4 layout message points at):
//! encoding version 0 — a version byte, the number of mappings (a
//! length-sized field), per mapping the source file name, the source dataset
//! name (null-terminated), the source selection and the virtual selection —
//! then a Jenkins lookup3 checksum. Selections are serialised as libhdf5
//! 1.10 reads them: `all`/`none` version 1, points version 1 (version 2 with
//! 8-byte fields past 32 bits), regular hyperslabs version 2 (8-byte fields,
//! all-ones = unlimited), irregular ones version 1 (version 3 with 8-byte
//! fields past 32 bits). The decoder beside it ([`super::mapping`]) reads
//! every one of these back.

use super::mapping::Mapping;
use crate::checksum::metadata_checksum;
use crate::dataspace_selection::DataspaceSelection;
use crate::error::{Error, Result};
use crate::Sizes;

const SEL_NONE: u32 = 0;
const SEL_POINTS: u32 = 1;
const SEL_HYPERSLABS: u32 = 2;
const SEL_ALL: u32 = 3;

fn u32le(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn fits32(v: &[u64]) -> bool {
    v.iter().all(|&x| x <= u64::from(u32::MAX))
}

fn bad(what: &str) -> Error {
    Error::InvalidArgument(format!("virtual dataset mapping: {what}"))
}

fn len32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| bad("selection too large to encode"))
}

/// Serialise one selection (`H5S_SELECT_SERIALIZE`'s formats).
pub fn encode_selection(sel: &DataspaceSelection, out: &mut Vec<u8>) -> Result<()> {
    match sel {
        DataspaceSelection::None | DataspaceSelection::All => {
            u32le(
                out,
                if matches!(sel, DataspaceSelection::All) {
                    SEL_ALL
                } else {
                    SEL_NONE
                },
            );
            u32le(out, 1);
            u32le(out, 0);
            u32le(out, 0);
        }
        DataspaceSelection::Points { rank, coords } => {
            let r = *rank;
            if r == 0 || coords.len() % r != 0 {
                return Err(bad("point coordinates do not match the rank"));
            }
            let n = coords.len() / r;
            u32le(out, SEL_POINTS);
            if fits32(coords) && u32::try_from(n).is_ok() {
                u32le(out, 1);
                u32le(out, 0);
                u32le(out, len32(8 + coords.len() * 4)?);
                u32le(out, len32(r)?);
                u32le(out, len32(n)?);
                for &c in coords {
                    u32le(out, c as u32);
                }
            } else {
                u32le(out, 2);
                out.push(8);
                u32le(out, len32(r)?);
                out.extend_from_slice(&(n as u64).to_le_bytes());
                for &c in coords {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
        DataspaceSelection::Regular(dims) => {
            if dims.is_empty() {
                return Err(bad("hyperslab of rank 0"));
            }
            u32le(out, SEL_HYPERSLABS);
            u32le(out, 2);
            out.push(1); // regular
            u32le(out, len32(4 + 32 * dims.len())?);
            u32le(out, len32(dims.len())?);
            for d in dims {
                for v in [
                    d.start,
                    d.stride,
                    d.count.unwrap_or(u64::MAX),
                    d.block.unwrap_or(u64::MAX),
                ] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        DataspaceSelection::Irregular { rank, blocks } => {
            let r = *rank;
            if r == 0 || blocks.len() % (2 * r) != 0 {
                return Err(bad("hyperslab blocks do not match the rank"));
            }
            let n = blocks.len() / (2 * r);
            u32le(out, SEL_HYPERSLABS);
            if fits32(blocks) && u32::try_from(n).is_ok() {
                u32le(out, 1);
                u32le(out, 0);
                u32le(out, len32(8 + blocks.len() * 4)?);
                u32le(out, len32(r)?);
                u32le(out, len32(n)?);
                for &b in blocks {
                    u32le(out, b as u32);
                }
            } else {
                u32le(out, 3);
                out.push(0); // not regular
                out.push(8);
                u32le(out, len32(r)?);
                out.extend_from_slice(&(n as u64).to_le_bytes());
                for &b in blocks {
                    out.extend_from_slice(&b.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

/// The mapping list as the global heap object stores it (encoding version 0,
/// checksum included), for a file whose lengths are `sizes.length` bytes.
pub fn encode_mappings(maps: &[Mapping], sizes: Sizes) -> Result<Vec<u8>> {
    let mut out = vec![0u8];
    let n = maps.len() as u64;
    let lw = usize::from(sizes.length);
    if lw < 8 && n >> (8 * lw) != 0 {
        return Err(bad("too many mappings for the file's length size"));
    }
    out.extend_from_slice(&n.to_le_bytes()[..lw.min(8)]);
    for m in maps {
        for name in [&m.source_file, &m.source_dataset] {
            if name.is_empty() || name.as_bytes().contains(&0) {
                return Err(bad("empty source name or a name holding NUL"));
            }
            out.extend_from_slice(name.as_bytes());
            out.push(0);
        }
        encode_selection(&m.source_select, &mut out)?;
        encode_selection(&m.virtual_select, &mut out)?;
    }
    let sum = metadata_checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

/// `spec` (type, shape, fill value) made a virtual dataset over `maps`, for
/// [`crate::write::FileWriter::create_dataset`] with no data.
pub fn virtual_spec(
    mut spec: crate::write::DatasetSpec,
    maps: &[Mapping],
) -> Result<crate::write::DatasetSpec> {
    spec.layout = crate::write::Layout::Virtual {
        mapping_list: encode_mappings(maps, crate::write::WRITER_SIZES)?,
    };
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::super::mapping::decode_mappings;
    use super::*;
    use crate::dataspace_selection::HyperDim;

    fn reg(d: &[(u64, u64, Option<u64>, Option<u64>)]) -> DataspaceSelection {
        DataspaceSelection::Regular(
            d.iter()
                .map(|&(start, stride, count, block)| HyperDim {
                    start,
                    stride,
                    count,
                    block,
                })
                .collect(),
        )
    }

    #[test]
    fn every_selection_kind_round_trips() {
        let maps = vec![
            Mapping {
                source_file: "scan0001/marana_0000.h5".into(),
                source_dataset: "/entry_0000/measurement/data".into(),
                source_select: DataspaceSelection::All,
                virtual_select: reg(&[(0, 1, Some(1), Some(4)), (0, 1, Some(1), Some(6))]),
            },
            Mapping {
                source_file: ".".into(),
                source_dataset: "/src".into(),
                source_select: DataspaceSelection::Points {
                    rank: 2,
                    coords: vec![0, 1, 2, 3, 1 << 40, 5],
                },
                virtual_select: DataspaceSelection::Irregular {
                    rank: 2,
                    blocks: vec![0, 0, 0, 2, 2, 3, 2, 4],
                },
            },
            Mapping {
                source_file: "p_%b.h5".into(),
                source_dataset: "d".into(),
                source_select: DataspaceSelection::None,
                virtual_select: reg(&[(0, 2, None, Some(2)), (0, 1, Some(1), Some(3))]),
            },
            Mapping {
                source_file: "big.h5".into(),
                source_dataset: "d".into(),
                source_select: DataspaceSelection::Irregular {
                    rank: 1,
                    blocks: vec![1 << 33, (1 << 33) + 4],
                },
                virtual_select: DataspaceSelection::Points {
                    rank: 1,
                    coords: vec![9, 1, 4, 2, 0],
                },
            },
        ];
        for sizes in [Sizes::default(), crate::write::WRITER_SIZES] {
            let block = encode_mappings(&maps, sizes).unwrap();
            assert_eq!(decode_mappings(&block, 0, sizes).unwrap(), maps);
        }
        // Written into a file and read back through the reader.
        let mut w = crate::write::FileWriter::in_memory();
        let root = w.root();
        let src = crate::write::DatasetSpec::new(crate::datatype::Datatype::int(4, true), &[4, 6]);
        let data: Vec<u8> = (0..24i32).flat_map(|v| v.to_le_bytes()).collect();
        w.create_dataset(root, "src", src, crate::write::DatasetData::Raw(data))
            .unwrap();
        let same = Mapping {
            source_file: ".".into(),
            source_dataset: "/src".into(),
            source_select: reg(&[(1, 1, Some(1), Some(2)), (0, 1, Some(1), Some(6))]),
            virtual_select: reg(&[(0, 1, Some(1), Some(2)), (0, 1, Some(1), Some(6))]),
        };
        let spec = crate::write::DatasetSpec::new(crate::datatype::Datatype::int(4, true), &[3, 6])
            .with_fill((-1i32).to_le_bytes().to_vec());
        let spec = virtual_spec(spec, std::slice::from_ref(&same)).unwrap();
        w.create_dataset(root, "v", spec, crate::write::DatasetData::None)
            .unwrap();
        let f = crate::file::File::from_bytes(w.finish().unwrap()).unwrap();
        let Ok(crate::file::Object::Dataset(d)) = f.object("/v") else {
            panic!("no /v")
        };
        assert_eq!(super::super::mappings(&d).unwrap(), vec![same]);
        let got: Vec<i32> = d
            .read_all_raw()
            .unwrap()
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut want: Vec<i32> = (6..18).collect();
        want.extend([-1; 6]);
        assert_eq!(got, want);
        assert!(encode_mappings(
            &[Mapping {
                source_file: String::new(),
                ..maps[0].clone()
            }],
            Sizes::default()
        )
        .is_err());
    }
}
