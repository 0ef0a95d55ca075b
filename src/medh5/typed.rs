//! Typed image reads of a medh5 sample (`docs/medh5-format.md` §2.4 images,
//! §5.5 patches): an image or a patch of it converted to a Rust number type,
//! as [`SampleFile::labelmap`] and [`SampleFile::labelmap_patch`] return
//! label volumes. Conversion and range errors follow
//! [`purehdf::low_level::convert`].

#![deny(missing_docs)]

use super::sample::SampleFile;
use crate::error::Result;
use purehdf::low_level::convert::Numeric;
use purehdf::low_level::slice::{Slice, SliceArg};

/// An image or patch read as `T`: C-order values and their shape.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageVolume<T> {
    /// Extent of each dimension read (channels first when the grid has them).
    pub shape: Vec<u64>,
    /// The voxels in C order.
    pub data: Vec<T>,
}

impl SampleFile {
    /// Image `id` (`images/<id>`, its level-0 data for a pyramid) converted to `T`.
    pub fn read_image<T: Numeric>(&self, id: &str) -> Result<ImageVolume<T>> {
        let ds = self.image(id)?;
        Ok(ImageVolume {
            shape: ds.shape().to_vec(),
            data: ds.read()?,
        })
    }

    /// The box `start .. start + count` of image `id` converted to `T`.
    /// `start` and `count` may name fewer dimensions than the image has;
    /// the rest are read whole.
    pub fn image_patch<T: Numeric>(
        &self,
        id: &str,
        start: &[u64],
        count: &[u64],
    ) -> Result<ImageVolume<T>> {
        let ds = self.image(id)?;
        let args: Vec<SliceArg> = start
            .iter()
            .zip(count)
            .map(|(&s, &c)| SliceArg::from(s..s.saturating_add(c)))
            .collect();
        let sl = Slice::new(args);
        let h = ds.hyperslab(&sl)?;
        if h.count.iter().zip(count).any(|(got, want)| got != want) {
            return Err(crate::error::Error::invalid(format!(
                "image {id}: patch {start:?}+{count:?} outside the shape {:?}",
                ds.shape()
            )));
        }
        Ok(ImageVolume {
            shape: h.count.clone(),
            data: ds.read_slice(&sl)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::create::{demo_sample, plan};
    use crate::profiles::Profile;
    use crate::writer::write_plan_bytes;
    use purehdf::low_level::file::File;

    #[test]
    fn demo_image_reads_typed_and_patched() {
        let sample = demo_sample().unwrap();
        let ct: Vec<i16> = sample.images[0]
            .data
            .bytes
            .chunks(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        let p = plan(sample, Profile::Balanced, Some(32 << 20)).unwrap();
        let f = SampleFile::from_file(File::from_bytes(write_plan_bytes(&p).unwrap()).unwrap());
        let img = f.read_image::<f32>("CT").unwrap();
        assert_eq!(img.shape, vec![32, 64, 64]);
        assert_eq!(img.data.len(), ct.len());
        assert!(img.data.iter().zip(&ct).all(|(&a, &b)| a == f32::from(b)));
        let patch = f
            .image_patch::<i32>("CT", &[3, 10, 20], &[2, 5, 7])
            .unwrap();
        assert_eq!(patch.shape, vec![2, 5, 7]);
        assert_eq!(patch.data[0], i32::from(ct[(3 * 64 + 10) * 64 + 20]));
        assert_eq!(patch.data[69], i32::from(ct[(4 * 64 + 14) * 64 + 26]));
        // -1000 HU does not fit in u8: a typed error
        assert!(f.read_image::<u8>("CT").is_err());
        assert!(f.image_patch::<i16>("CT", &[30], &[5]).is_err());
    }
}
