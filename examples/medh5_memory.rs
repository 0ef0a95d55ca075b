//! medh5 entirely in memory: create the demo sample, open it from bytes,
//! verify its digests and content_id, read an image patch typed and a
//! labelmap patch. `cargo run --example medh5_memory`.
use purehdf::File;
use purehdf_medh5::{create, profiles::Profile, sample::SampleFile, verify, writer};

fn main() -> purehdf_medh5::error::Result<()> {
    let sample = create::demo_sample()?; // a 32x64x64 CT phantom with an organ labelmap
    let plan = create::plan_at(sample, Profile::Balanced, None, "2026-01-01T00:00:00Z")?;
    let bytes = writer::write_plan_bytes(&plan)?;
    let file = File::from_bytes(bytes)?;
    let report = verify::verify_file(&file, "memory", None)?;
    assert!(report.ok && report.content_id_ok == Some(true));
    let s = SampleFile::from_file(file);
    let patch = s.image_patch::<f32>("CT", &[12, 20, 20], &[8, 16, 16])?;
    let labels = s.labelmap_patch("organs", &[12, 20, 20], &[8, 16, 16])?;
    let liver = labels.data.iter().filter(|&&l| l == 1).count();
    println!(
        "{}: patch {:?}, mean {:.1} HU, {liver} liver voxels",
        plan.content_id,
        patch.shape,
        patch.data.iter().sum::<f32>() / patch.data.len() as f32
    );
    assert!(liver > 0);
    Ok(())
}
