//! The write plan: the ordered list of HDF5 objects, types, layouts, filter
//! pipelines, data and attributes a writer must emit for a sample (see
//! `docs/medh5-format.md` §2, §5.3, §6, §8 commit order), with every `digest`
//! and the `content_id` already computed. Independent of any HDF5 writer.

use super::attribute::{vlen_utf8, AttrValue};
use super::chunking::{detect_l3_bytes, guess_chunk};
use super::index::{build_entry, IndexEntry};
use super::integrity::{self, ContentIdInput, DigestAlgo};
use super::model::{ArrayData, Sample};
use super::profiles::{is_contiguous, Profile, Role};
use crate::error::Result;
use purehdf::low_level::datatype::Datatype;
use purehdf_filters::FilterSpec;

/// Writer settings.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// The codec profile that picks each bulk dataset's filter pipeline
    /// (§6.1); default [`Profile::Balanced`].
    pub profile: Profile,
    /// The algorithm of every `digest` and of `content_id`, written as the
    /// root `digest_algo` (default sha256). Index `source_digest`s are sha256
    /// whatever this is.
    pub digest_algo: DigestAlgo,
    /// Root `created` (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub created: String,
    /// Root `generator`.
    pub generator: String,
    /// L3 bytes for the chunk optimiser; `None` = detect on this host.
    pub l3_bytes: Option<u64>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            profile: Profile::Balanced,
            digest_algo: DigestAlgo::Sha256,
            created: "2000-01-01T00:00:00Z".to_string(),
            generator: format!("purehdf {}", env!("CARGO_PKG_VERSION")),
            l3_bytes: None,
        }
    }
}

/// Storage layout of one dataset.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    /// Contiguous, no filters.
    Contiguous,
    /// Chunked with `dims`, filtered by `filters` (in pipeline order).
    Chunked {
        /// Chunk shape in elements, one extent per dataset axis.
        dims: Vec<u64>,
        /// The filter pipeline applied to each chunk, first filter first
        /// (empty: chunked but unfiltered).
        filters: Vec<FilterSpec>,
    },
}

/// The elements of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanData {
    /// C-order little-endian element bytes of a numeric dataset.
    Bytes(Vec<u8>),
    /// Vlen UTF-8 strings (C order; one for a scalar).
    Strings(Vec<String>),
}

/// One dataset to create.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetSpec {
    /// Absolute HDF5 path (`/images/CT`).
    pub path: String,
    /// The stored element type (little-endian numerics, or vlen UTF-8).
    pub datatype: Datatype,
    /// Dataspace dims; empty = scalar.
    pub shape: Vec<u64>,
    /// Contiguous, or chunked with its filter pipeline (chosen by the profile
    /// and the chunk rules of §6.2–§6.4).
    pub layout: Layout,
    /// The elements to write, unfiltered.
    pub data: PlanData,
    /// Attributes in creation order (`digest` last when stamped).
    pub attrs: Vec<(String, AttrValue)>,
}

/// One step of the plan, to be executed in order.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanStep {
    /// Create the group at absolute `path` with these attributes.
    Group {
        /// Absolute HDF5 path (`/grids/ct`); parents are created by earlier
        /// steps.
        path: String,
        /// Attributes in creation order.
        attrs: Vec<(String, AttrValue)>,
    },
    /// Create a dataset with its data and attributes.
    Dataset(DatasetSpec),
    /// Write these attributes on the root group, in order (`content_id` last).
    RootAttrs(Vec<(String, AttrValue)>),
}

/// The whole plan plus the values it stamps.
#[derive(Clone, Debug, PartialEq)]
pub struct WritePlan {
    /// What to create, in commit order: layout groups, grids, images,
    /// annotations, the sampling index, `/meta`, then the root attributes.
    pub steps: Vec<PlanStep>,
    /// The `/meta` document as serialised (§3.3), the exact text hashed into
    /// `content_id`.
    pub meta: String,
    /// The `medh5_profiles` written, sorted in byte order.
    pub profiles: Vec<String>,
    /// The root `content_id` (`<algo>:<hex>`, §5.4) the plan stamps.
    pub content_id: String,
}

impl WritePlan {
    /// The dataset at absolute or relative `path`.
    pub fn dataset(&self, path: &str) -> Option<&DatasetSpec> {
        let want = format!("/{}", path.trim_start_matches('/'));
        self.steps.iter().find_map(|s| match s {
            PlanStep::Dataset(d) if d.path == want => Some(d),
            _ => None,
        })
    }

    /// The group at absolute or relative `path`.
    pub fn group_attrs(&self, path: &str) -> Option<&[(String, AttrValue)]> {
        let want = format!("/{}", path.trim_start_matches('/'));
        self.steps.iter().find_map(|s| match s {
            PlanStep::Group { path, attrs } if *path == want => Some(attrs.as_slice()),
            _ => None,
        })
    }
}

fn json_attrs(attrs: &[(String, AttrValue)]) -> Vec<(String, super::canonical_json::Json)> {
    attrs
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect()
}

struct Planner {
    opts: WriteOptions,
    l3: u64,
    steps: Vec<PlanStep>,
    digests: Vec<(String, String)>,
    attr_objects: Vec<(String, String)>,
    /// Digests of the image and annotation datasets, computed beside validation.
    precomputed: std::collections::HashMap<String, String>,
}

impl Planner {
    /// A numeric dataset: layout by size and role, digest stamped.
    fn dataset(
        &mut self,
        rel: &str,
        array: ArrayData,
        chunk: Option<Vec<u64>>,
        mut attrs: Vec<(String, AttrValue)>,
    ) -> Result<()> {
        let es = array.dtype.size();
        let layout = if is_contiguous(&array.shape, u64::from(es)) {
            Layout::Contiguous
        } else {
            let dims = match chunk {
                Some(c) => c,
                None => guess_chunk(&array.shape, u64::from(es)),
            };
            let filters = self
                .opts
                .profile
                .codec(Role::for_path(rel))
                .pipeline(es, &dims)?;
            Layout::Chunked { dims, filters }
        };
        if integrity::is_stamped_path(rel) {
            let digest = self.precomputed.remove(rel).unwrap_or_else(|| {
                integrity::dataset_digest(
                    self.opts.digest_algo,
                    rel,
                    array.dtype.descr(),
                    &array.shape,
                    &array.bytes,
                )
            });
            self.digests.push((rel.to_string(), digest.clone()));
            attrs.push(("digest".to_string(), AttrValue::Str(digest)));
        }
        self.steps.push(PlanStep::Dataset(DatasetSpec {
            path: format!("/{rel}"),
            datatype: array.dtype.datatype(),
            shape: array.shape,
            layout,
            data: PlanData::Bytes(array.bytes),
            attrs,
        }));
        Ok(())
    }

    /// The steps of `/index/<ann_id>/` (§6.8): `source_digest` is the group
    /// digest of the annotation's datasets, always in sha256.
    fn index_entry(
        &mut self,
        ann_id: &str,
        e: IndexEntry,
        opts: super::index::IndexOptions,
    ) -> Result<()> {
        let prefix = format!("annotations/{ann_id}/");
        let children: Vec<(String, String)> = self
            .digests
            .iter()
            .filter_map(|(p, d)| {
                let name = p.strip_prefix(&prefix)?;
                (!name.contains('/')).then(|| (name.to_string(), d.clone()))
            })
            .collect();
        let children = if self.opts.digest_algo == DigestAlgo::Sha256 {
            children
        } else {
            // Recompute the children's digests in sha256 for the source digest.
            self.sha256_children(&prefix)
        };
        let source = integrity::group_digest(DigestAlgo::Sha256, &children);
        let base = format!("index/{ann_id}");
        self.steps.push(PlanStep::Group {
            path: format!("/{base}"),
            attrs: vec![
                ("source_digest".to_string(), AttrValue::Str(source)),
                (
                    "max_coords".to_string(),
                    AttrValue::i64(opts.max_coords as i64),
                ),
                ("seed".to_string(), AttrValue::i64(opts.seed as i64)),
            ],
        });
        self.dataset(&format!("{base}/class_ids"), e.class_ids, None, Vec::new())?;
        self.dataset(
            &format!("{base}/voxel_counts"),
            e.voxel_counts,
            None,
            Vec::new(),
        )?;
        self.dataset(
            &format!("{base}/class_bboxes"),
            e.class_bboxes,
            None,
            Vec::new(),
        )?;
        self.steps.push(PlanStep::Group {
            path: format!("/{base}/fg_coords"),
            attrs: Vec::new(),
        });
        for (class, coords) in e.fg_coords {
            self.dataset(
                &format!("{base}/fg_coords/{class}"),
                coords,
                None,
                Vec::new(),
            )?;
        }
        if let Some(occ) = e.occupancy {
            let mut chunk = vec![1u64];
            chunk.extend(occ.shape.iter().skip(1));
            self.dataset(&format!("{base}/occupancy"), occ, Some(chunk), Vec::new())?;
        }
        Ok(())
    }

    /// sha256 digests of the datasets planned directly under `prefix`.
    fn sha256_children(&self, prefix: &str) -> Vec<(String, String)> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                PlanStep::Dataset(d) => {
                    let rel = d.path.trim_start_matches('/');
                    let name = rel.strip_prefix(prefix)?;
                    let PlanData::Bytes(bytes) = &d.data else {
                        return None;
                    };
                    let descr = integrity::dtype_descr(&d.datatype)?;
                    (!name.contains('/')).then(|| {
                        (
                            name.to_string(),
                            integrity::dataset_digest(
                                DigestAlgo::Sha256,
                                rel,
                                &descr,
                                &d.shape,
                                bytes,
                            ),
                        )
                    })
                }
                _ => None,
            })
            .collect()
    }

    fn covered(&mut self, rel: &str, attrs: &[(String, AttrValue)]) {
        if let Some(names) = integrity::covered_names(rel) {
            self.attr_objects.push((
                rel.to_string(),
                integrity::canonical_attrs(names, &json_attrs(attrs)),
            ));
        }
    }
}

impl Sample {
    /// The digests of every stamped image and annotation dataset, by
    /// sample-relative path, one parallel task per dataset.
    fn stamped_digests(&self, algo: DigestAlgo) -> std::collections::HashMap<String, String> {
        let mut arrays: Vec<(String, &ArrayData)> = Vec::new();
        for img in &self.images {
            arrays.push((format!("images/{}", img.id), &img.data));
        }
        for ann in &self.annotations {
            for (name, a) in ann.encoding.datasets() {
                arrays.push((format!("annotations/{}/{name}", ann.id), a));
            }
        }
        arrays.retain(|(rel, _)| integrity::is_stamped_path(rel));
        let digest = |(rel, a): &(String, &ArrayData)| {
            let d = integrity::dataset_digest(algo, rel, a.dtype.descr(), &a.shape, &a.bytes);
            (rel.clone(), d)
        };
        #[cfg(feature = "parallel")]
        if arrays.len() > 1 && purehdf_filters::threads::parallel() {
            use rayon::prelude::*;
            return arrays.par_iter().map(digest).collect();
        }
        arrays.iter().map(digest).collect()
    }

    /// Validate the sample and turn it into the ordered write plan.
    pub fn into_plan(self, opts: WriteOptions) -> Result<WritePlan> {
        // The label checks and the digests (one SHA-256 stream per dataset)
        // are independent passes over the same bytes: run them side by side.
        let (valid, precomputed) = purehdf_filters::threads::join(
            || self.validate(),
            || self.stamped_digests(opts.digest_algo),
        );
        valid?;
        let l3 = opts.l3_bytes.unwrap_or_else(detect_l3_bytes);
        let profiles = self.profiles();
        let meta = self.document.to_meta();
        let mut p = Planner {
            opts,
            l3,
            steps: Vec::new(),
            digests: Vec::new(),
            attr_objects: Vec::new(),
            precomputed,
        };
        for g in ["grids", "images", "annotations"] {
            p.steps.push(PlanStep::Group {
                path: format!("/{g}"),
                attrs: Vec::new(),
            });
        }
        let Sample {
            grids,
            images,
            annotations,
            index,
            ..
        } = self;
        let mut entries: Vec<(String, IndexEntry)> = Vec::new();
        for g in &grids {
            let attrs = g.attrs();
            p.covered(&format!("grids/{}", g.id), &attrs);
            p.steps.push(PlanStep::Group {
                path: format!("/grids/{}", g.id),
                attrs,
            });
        }
        let grid_of = |id: &str| grids.iter().find(|g| g.id == id);
        for img in images {
            let rel = format!("images/{}", img.id);
            let attrs = img.attrs();
            p.covered(&rel, &attrs);
            let es = u64::from(img.data.dtype.size());
            let chunk = match grid_of(&img.grid) {
                Some(g) => Some(g.chunks(es, 0, p.l3)?),
                None => None,
            };
            p.dataset(&rel, img.data, chunk, attrs)?;
        }
        for ann in annotations {
            let rel = format!("annotations/{}", ann.id);
            let attrs = ann.attrs();
            p.covered(&rel, &attrs);
            p.steps.push(PlanStep::Group {
                path: format!("/{rel}"),
                attrs,
            });
            let grid = grid_of(&ann.grid);
            if let (Some(opts), Some(g)) = (&index, grid) {
                if !matches!(ann.encoding, super::model::Encoding::Mask { .. }) {
                    let entry =
                        build_entry(&ann.encoding, &ann.class_ids, &g.spatial_shape(), opts)?;
                    entries.push((ann.id.clone(), entry));
                }
            }
            for (name, array) in ann.encoding.into_datasets() {
                let chunk = match (name, grid) {
                    ("data", Some(g)) => Some(g.annotation_chunks(
                        &array.shape,
                        u64::from(array.dtype.size()),
                        p.l3,
                    )?),
                    _ => None,
                };
                p.dataset(&format!("{rel}/{name}"), array, chunk, Vec::new())?;
            }
        }
        if let Some(opts) = index {
            if !entries.is_empty() {
                p.steps.push(PlanStep::Group {
                    path: "/index".to_string(),
                    attrs: Vec::new(),
                });
            }
            for (ann_id, entry) in entries {
                p.index_entry(&ann_id, entry, opts)?;
            }
        }
        p.steps.push(PlanStep::Dataset(DatasetSpec {
            path: "/meta".to_string(),
            datatype: vlen_utf8(),
            shape: Vec::new(),
            layout: Layout::Contiguous,
            data: PlanData::Strings(vec![meta.clone()]),
            attrs: Vec::new(),
        }));
        let mut root = vec![
            ("medh5_version".to_string(), AttrValue::str("1.0")),
            ("medh5_kind".to_string(), AttrValue::str("sample")),
            ("medh5_profiles".to_string(), AttrValue::strs(&profiles)),
        ];
        p.covered("", &root);
        let algo = p.opts.digest_algo;
        root.push(("created".to_string(), AttrValue::str(&p.opts.created)));
        root.push(("generator".to_string(), AttrValue::str(&p.opts.generator)));
        root.push(("digest_algo".to_string(), AttrValue::str(algo.name())));
        let content_id = ContentIdInput {
            algo,
            datasets: p.digests.clone(),
            meta: meta.as_bytes().to_vec(),
            attribute_objects: p.attr_objects.clone(),
        }
        .content_id();
        root.push(("content_id".to_string(), AttrValue::Str(content_id.clone())));
        p.steps.push(PlanStep::RootAttrs(root));
        Ok(WritePlan {
            steps: p.steps,
            meta,
            profiles,
            content_id,
        })
    }
}
