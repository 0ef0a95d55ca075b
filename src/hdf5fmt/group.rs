//! Groups (HDF5 File Format Specification IV.A.2.c/g/k/r): listing links in
//! name or creation order, and opening objects by relative or absolute path,
//! following hard, soft and external links under a hop limit with cycle detection.

use std::sync::Arc;

use crate::attribute::AttrStorage;
use crate::attribute::{self, Attribute};
use crate::cursor::Cursor;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::file_core::File;
use crate::limits;
use crate::link::{dense_links, join_path, symbol_table_links, Link, LinkMessage};
use crate::messages::link_info::LinkInfo;
use crate::messages::symbol_table::SymbolTable;
use crate::messages::types;
use crate::named_datatype::NamedDatatype;
use crate::object_header::ObjectHeader;

/// How a group stores its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupStorage {
    /// Old style: v1 B-tree + local heap.
    SymbolTable,
    /// Link messages in the object header.
    Compact,
    /// Fractal heap + v2 B-tree.
    Dense,
}

impl GroupStorage {
    /// `"symbol_table"`, `"compact"` or `"dense"`.
    pub fn name(self) -> &'static str {
        match self {
            GroupStorage::SymbolTable => "symbol_table",
            GroupStorage::Compact => "compact",
            GroupStorage::Dense => "dense",
        }
    }
}

/// An open group.
#[derive(Clone, Debug)]
pub struct Group {
    file: File,
    path: String,
    header: Arc<ObjectHeader>,
}

/// Links visited while resolving one path (hop count and cycle detection).
#[derive(Default)]
struct Resolution {
    hops: usize,
    seen: Vec<String>,
}

impl Resolution {
    fn hop(&mut self, key: String) -> Result<()> {
        self.hops += 1;
        if self.hops > limits::MAX_LINK_HOPS {
            return Err(Error::Limit {
                structure: "link resolution",
                offset: 0,
                what: "soft/external link hops",
                value: self.hops as u64,
                limit: limits::MAX_LINK_HOPS as u64,
            });
        }
        if self.seen.contains(&key) {
            return Err(Error::Cycle {
                structure: "link resolution",
                offset: 0,
            });
        }
        self.seen.push(key);
        Ok(())
    }
}

impl Group {
    pub(crate) fn new(file: File, path: String, header: Arc<ObjectHeader>) -> Result<Self> {
        Ok(Group { file, path, header })
    }

    /// The file the group lives in.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Path the group was reached by.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The object header (internal structure; may change).
    pub fn header(&self) -> &ObjectHeader {
        &self.header
    }

    /// Object header address (relative to the base address).
    pub fn address(&self) -> u64 {
        self.header.address
    }

    fn symbol_table(&self) -> Result<Option<SymbolTable>> {
        match self.header.first(types::SYMBOL_TABLE) {
            None => Ok(None),
            Some(m) => Ok(Some(SymbolTable::decode(
                &mut m.cursor("symbol table message"),
                self.file.sizes(),
            )?)),
        }
    }

    fn link_info(&self) -> Result<Option<LinkInfo>> {
        match self.header.first(types::LINK_INFO) {
            None => Ok(None),
            Some(m) => Ok(Some(LinkInfo::decode(
                &mut m.cursor("link info message"),
                self.file.sizes(),
            )?)),
        }
    }

    /// How the group stores its links.
    pub fn storage(&self) -> GroupStorage {
        if self.header.has(types::SYMBOL_TABLE) {
            return GroupStorage::SymbolTable;
        }
        match self.link_info() {
            Ok(Some(i)) if i.heap_address.is_some() => GroupStorage::Dense,
            _ => GroupStorage::Compact,
        }
    }

    /// How the group stores its attributes.
    pub fn attr_storage(&self) -> AttrStorage {
        attribute::storage(&self.file, &self.header)
    }

    fn link_messages(&self, by_order: bool) -> Result<Vec<LinkMessage>> {
        if let Some(st) = self.symbol_table()? {
            return symbol_table_links(&self.file, &st);
        }
        let mut out = Vec::new();
        for m in self.header.all(types::LINK) {
            let body = self.file.message_body(m)?;
            out.push(LinkMessage::decode(
                &mut Cursor::new(&body, m.offset, "link message"),
                self.file.sizes(),
            )?);
        }
        if let Some(info) = self.link_info()? {
            out.extend(dense_links(&self.file, &info, by_order)?);
        }
        Ok(out)
    }

    fn sorted_links(&self) -> Result<Arc<Vec<LinkMessage>>> {
        self.file
            .cached_links(self.address(), || self.link_messages(false))
    }

    /// Every link, sorted by name (byte order, as libhdf5's name index).
    pub fn links(&self) -> Result<Vec<(String, Link)>> {
        Ok(self
            .sorted_links()?
            .iter()
            .map(|m| (m.name.clone(), m.link.clone()))
            .collect())
    }

    /// Every link in creation order (name order for links without one).
    pub fn links_by_creation_order(&self) -> Result<Vec<(String, Link)>> {
        let mut v = self.link_messages(true)?;
        v.sort_by(|a, b| {
            (a.creation_order, a.name.as_bytes()).cmp(&(b.creation_order, b.name.as_bytes()))
        });
        Ok(v.into_iter().map(|m| (m.name, m.link)).collect())
    }

    /// The link named `name` in this group.
    pub fn link(&self, name: &str) -> Result<Link> {
        let links = self.sorted_links()?;
        links
            .binary_search_by(|m| m.name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .and_then(|i| links.get(i))
            .map(|m| m.link.clone())
            .ok_or_else(|| Error::NotFound(join_path(&self.path, name)))
    }

    /// Open the object at `path`: relative to this group, or absolute from the root.
    pub fn open(&self, path: &str) -> Result<Object> {
        self.open_with(path, &mut Resolution::default())
    }

    /// Open a child group.
    pub fn group(&self, path: &str) -> Result<Group> {
        match self.open(path)? {
            Object::Group(g) => Ok(g),
            o => Err(Error::InvalidArgument(format!(
                "{} is a {}, not a group",
                o.path(),
                o.kind_name()
            ))),
        }
    }

    /// Open a dataset.
    pub fn dataset(&self, path: &str) -> Result<crate::dataset::Dataset> {
        match self.open(path)? {
            Object::Dataset(d) => Ok(*d),
            o => Err(Error::InvalidArgument(format!(
                "{} is a {}, not a dataset",
                o.path(),
                o.kind_name()
            ))),
        }
    }

    fn open_with(&self, path: &str, res: &mut Resolution) -> Result<Object> {
        let mut cur = if path.starts_with('/') {
            root_group(&self.file)?
        } else {
            self.clone()
        };
        let comps: Vec<&str> = path
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let Some((last, inner)) = comps.split_last() else {
            return Ok(Object::Group(cur));
        };
        for name in inner {
            cur = match cur.follow(name, res)? {
                Object::Group(g) => g,
                o => {
                    return Err(Error::NotFound(format!(
                        "{}: {} is not a group",
                        path,
                        o.path()
                    )))
                }
            };
        }
        cur.follow(last, res)
    }

    fn follow(&self, name: &str, res: &mut Resolution) -> Result<Object> {
        let full = join_path(&self.path, name);
        match self.link(name)? {
            Link::Hard(addr) => object_at(&self.file, addr, full),
            Link::Soft(target) => {
                res.hop(format!("{}\0{}", self.file_key(), full))?;
                let obj = self.open_with(&target, res)?;
                Ok(rename(obj, full))
            }
            Link::External { file, path } => {
                res.hop(format!("{}\0{}", self.file_key(), full))?;
                let ext = self.file.open_external(&file)?;
                let obj = root_group(&ext)?.open_with(&path, res)?;
                Ok(rename(obj, full))
            }
            Link::UserDefined { kind, .. } => Err(Error::unsupported(
                "link",
                self.address(),
                format!("user-defined link type {kind} at {full}"),
            )),
        }
    }

    fn file_key(&self) -> String {
        self.file
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    /// Every member of the group in name order: the link name and the object
    /// it leads to (h5py's `group.items()`). Hard links always resolve (a
    /// malformed target is an error); soft and external links are followed,
    /// and one that leads nowhere (a dangling soft link, a missing external
    /// file, a user-defined link) is left out — [`Group::links`] lists every
    /// link, resolved or not.
    ///
    /// ```
    /// use purehdf::{DatasetSpec, File, FileWriter, Object};
    /// let mut w = FileWriter::in_memory();
    /// let g = w.create_group(w.root(), "scan")?;
    /// w.write_dataset(g, "ct", DatasetSpec::of::<u8>(&[2]), &[1u8, 2])?;
    /// w.create_group(g, "labels")?;
    /// let file = File::from_bytes(w.finish()?)?;
    /// let scan = file.root()?.group("scan")?;
    /// let names: Vec<String> = scan.members()?.into_iter().map(|(name, _)| name).collect();
    /// assert_eq!(names, ["ct", "labels"]);
    /// assert_eq!(scan.datasets()?[0].path(), "/scan/ct");
    /// assert_eq!(scan.groups()?[0].path(), "/scan/labels");
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn members(&self) -> Result<Vec<(String, Object)>> {
        let mut out = Vec::new();
        for (name, link) in self.links()? {
            let obj = match link {
                Link::Hard(addr) => object_at(&self.file, addr, join_path(&self.path, &name))?,
                _ => match self.open(&name) {
                    Ok(o) => o,
                    Err(_) => continue,
                },
            };
            out.push((name, obj));
        }
        Ok(out)
    }

    /// The member groups, in name order (see [`Group::members`]).
    pub fn groups(&self) -> Result<Vec<Group>> {
        Ok(self
            .members()?
            .into_iter()
            .filter_map(|(_, o)| match o {
                Object::Group(g) => Some(g),
                _ => None,
            })
            .collect())
    }

    /// The member datasets, in name order (see [`Group::members`]).
    pub fn datasets(&self) -> Result<Vec<crate::dataset::Dataset>> {
        Ok(self
            .members()?
            .into_iter()
            .filter_map(|(_, o)| match o {
                Object::Dataset(d) => Some(*d),
                _ => None,
            })
            .collect())
    }

    /// Call `f` with every object below this group, recursively: h5py's
    /// `visititems`. Objects come depth first in name order, each with its
    /// path relative to this group (`"scan/ct"`); only hard links are
    /// followed (soft and external links are not, as in libhdf5's
    /// `H5Ovisit`), and an object reached by several hard links is visited
    /// once, under the first path met — so hard-link cycles end. The group
    /// itself is not passed to `f`. An error from `f` stops the walk and is
    /// returned.
    ///
    /// ```
    /// use purehdf::{DatasetSpec, File, FileWriter, Object};
    /// let mut w = FileWriter::in_memory();
    /// let g = w.create_group(w.root(), "scan")?;
    /// w.write_dataset(g, "ct", DatasetSpec::of::<u8>(&[2]), &[1u8, 2])?;
    /// let file = File::from_bytes(w.finish()?)?;
    /// let mut seen = Vec::new();
    /// file.root()?.visit(|path, obj| {
    ///     seen.push(format!("{path} {}", obj.kind_name()));
    ///     Ok(())
    /// })?;
    /// assert_eq!(seen, ["scan group", "scan/ct dataset"]);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn visit<F>(&self, mut f: F) -> Result<()>
    where
        F: FnMut(&str, &Object) -> Result<()>,
    {
        /// A hard link still to follow: path relative to the walk's group,
        /// target address, path from the root.
        struct Pending {
            rel: String,
            addr: u64,
            full: String,
        }
        fn push_children(stack: &mut Vec<Pending>, rel: &str, g: &Group) -> Result<()> {
            let links = g.links()?;
            // last first, so that the stack pops them in name order
            for (name, link) in links.into_iter().rev() {
                if let Link::Hard(addr) = link {
                    stack.push(Pending {
                        rel: if rel.is_empty() {
                            name.clone()
                        } else {
                            format!("{rel}/{name}")
                        },
                        addr,
                        full: join_path(&g.path, &name),
                    });
                }
            }
            Ok(())
        }
        // An object counts as seen when its turn comes (after its elder
        // siblings' subtrees), as in a recursive walk; the explicit stack
        // keeps deep files from exhausting the call stack.
        let mut seen = std::collections::HashSet::from([self.address()]);
        let mut stack = Vec::new();
        push_children(&mut stack, "", self)?;
        while let Some(p) = stack.pop() {
            if !seen.insert(p.addr) {
                continue;
            }
            let obj = object_at(&self.file, p.addr, p.full)?;
            f(&p.rel, &obj)?;
            if let Object::Group(g) = &obj {
                push_children(&mut stack, &p.rel, g)?;
            }
        }
        Ok(())
    }

    /// The group's attributes, sorted by name.
    pub fn attributes(&self) -> Result<Vec<Attribute>> {
        attribute::read_all(&self.file, &self.header)
    }

    /// The attribute named `name`.
    pub fn attribute(&self, name: &str) -> Result<Attribute> {
        attribute::find(&self.file, &self.header, name)
    }
}

/// The object reached through a soft or external link keeps the link's path.
/// An object reached through a hard link.
#[derive(Clone, Debug)]
pub enum Object {
    /// A group.
    Group(Group),
    /// A dataset.
    Dataset(Box<Dataset>),
    /// A committed datatype.
    NamedDatatype(NamedDatatype),
}

impl Object {
    /// Path the object was reached by.
    pub fn path(&self) -> &str {
        match self {
            Object::Group(g) => g.path(),
            Object::Dataset(d) => d.path(),
            Object::NamedDatatype(t) => &t.path,
        }
    }

    /// The object header.
    pub fn header(&self) -> &ObjectHeader {
        match self {
            Object::Group(g) => g.header(),
            Object::Dataset(d) => d.header(),
            Object::NamedDatatype(t) => &t.header,
        }
    }

    /// Object header address (relative to the base address).
    pub fn address(&self) -> u64 {
        self.header().address
    }

    /// `"group"`, `"dataset"` or `"datatype"`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Object::Group(_) => "group",
            Object::Dataset(_) => "dataset",
            Object::NamedDatatype(_) => "datatype",
        }
    }

    /// The object's attributes (name order).
    pub fn attributes(&self) -> Result<Vec<Attribute>> {
        match self {
            Object::Group(g) => g.attributes(),
            Object::Dataset(d) => d.attributes(),
            Object::NamedDatatype(t) => t.attributes(),
        }
    }

    /// The object's attributes decoded one by one (a bad one is an `Err` entry).
    pub fn attributes_each(&self) -> Vec<Result<Attribute>> {
        crate::attribute::read_each(self.file(), self.header())
    }

    /// The file the object lives in (for external links: the other file).
    pub fn file(&self) -> &File {
        match self {
            Object::Group(g) => g.file(),
            Object::Dataset(d) => d.file(),
            Object::NamedDatatype(t) => &t.file,
        }
    }
}

/// The root group of `file`.
pub(crate) fn root_group(file: &File) -> Result<Group> {
    let h = file
        .header(file.superblock().root_address)
        .map_err(in_object("/"))?;
    Group::new(file.clone(), "/".to_string(), Arc::new(h)).map_err(in_object("/"))
}

/// The object of `file` whose header is at `address`, named `path`.
pub(crate) fn object_at(file: &File, address: u64, path: String) -> Result<Object> {
    let named = path.clone();
    object_at_unnamed(file, address, path).map_err(in_object(&named))
}

/// [`object_at`] with decode errors as they come.
fn object_at_unnamed(file: &File, address: u64, path: String) -> Result<Object> {
    let h = Arc::new(file.header(address)?);
    let is_group = h.has(types::SYMBOL_TABLE) || h.has(types::LINK_INFO) || h.has(types::LINK);
    if is_group {
        return Ok(Object::Group(Group::new(file.clone(), path, h)?));
    }
    if h.has(types::LAYOUT) || (h.has(types::DATASPACE) && h.has(types::DATATYPE)) {
        return Ok(Object::Dataset(Box::new(Dataset::new(
            file.clone(),
            path,
            h,
        )?)));
    }
    if let Some(m) = h.first(types::DATATYPE) {
        let dtype = file.datatype(m)?;
        return Ok(Object::NamedDatatype(NamedDatatype {
            file: file.clone(),
            path,
            header: h,
            dtype,
        }));
    }
    // An object header with no group, dataset or datatype messages: libhdf5
    // treats a bare header as a group only when it has group messages, but
    // empty old-style groups do exist; report it as an empty group.
    Ok(Object::Group(Group::new(file.clone(), path, h)?))
}

/// Wraps a decode error raised while opening the object at `path` in
/// [`Error::InObject`]; errors about the source (I/O, a changed or stale
/// file, bytes still to fetch) and errors already naming a path pass as they
/// are.
fn in_object(path: &str) -> impl Fn(Error) -> Error + '_ {
    move |e| match e {
        Error::Truncated { .. }
        | Error::Malformed { .. }
        | Error::Unsupported { .. }
        | Error::Checksum { .. }
        | Error::RecordChecksum { .. }
        | Error::Overflow { .. }
        | Error::Limit { .. }
            if !path.is_empty() =>
        {
            Error::InObject {
                path: path.to_string(),
                source: Box::new(e),
            }
        }
        other => other,
    }
}

fn rename(obj: Object, path: String) -> Object {
    match obj {
        Object::Group(mut g) => {
            g.path = path;
            Object::Group(g)
        }
        Object::Dataset(d) => Object::Dataset(Box::new(d.with_path(path))),
        Object::NamedDatatype(mut t) => {
            t.path = path;
            Object::NamedDatatype(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{DatasetSpec, FileWriter};

    /// `/a/x`, `/a/sub/`, `/b` (a second hard link to `/a/x`), `/c` (soft
    /// link to `/a`), `/d` (dangling soft link), `/e` (external link to a
    /// missing file), `/loop` (soft link to itself).
    fn sample() -> File {
        let mut w = FileWriter::in_memory();
        let root = w.root();
        let a = w.create_group(root, "a").unwrap();
        let x = w
            .write_dataset(a, "x", DatasetSpec::of::<u8>(&[3]), &[1u8, 2, 3])
            .unwrap();
        w.create_group(a, "sub").unwrap();
        w.hard_link(root, "b", x).unwrap();
        w.soft_link(root, "c", "/a").unwrap();
        w.soft_link(root, "d", "/nowhere").unwrap();
        w.external_link(root, "e", "missing-purehdf-file.h5", "/x")
            .unwrap();
        w.soft_link(root, "loop", "/loop").unwrap();
        File::from_bytes(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn members_resolve_what_they_can() {
        let f = sample();
        let root = f.root().unwrap();
        let members: Vec<(String, &str, String)> = root
            .members()
            .unwrap()
            .iter()
            .map(|(n, o)| (n.clone(), o.kind_name(), o.path().to_string()))
            .collect();
        assert_eq!(
            members,
            [
                ("a".to_string(), "group", "/a".to_string()),
                ("b".to_string(), "dataset", "/b".to_string()),
                ("c".to_string(), "group", "/c".to_string()),
            ]
        );
        let groups: Vec<String> = root
            .groups()
            .unwrap()
            .iter()
            .map(|g| g.path().to_string())
            .collect();
        assert_eq!(groups, ["/a", "/c"]);
        let a = root.group("a").unwrap();
        assert_eq!(a.datasets().unwrap()[0].read::<u8>().unwrap(), [1, 2, 3]);
        assert_eq!(a.groups().unwrap()[0].path(), "/a/sub");
        assert_eq!(root.links().unwrap().len(), 6);
    }

    #[test]
    fn visit_walks_hard_links_once_in_name_order() {
        let f = sample();
        let root = f.root().unwrap();
        let mut seen = Vec::new();
        root.visit(|rel, obj| {
            seen.push(format!("{rel} {} {}", obj.kind_name(), obj.path()));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            ["a group /a", "a/sub group /a/sub", "a/x dataset /a/x"]
        );
        // from a subgroup: paths relative to it
        let mut rel = Vec::new();
        root.group("c")
            .unwrap()
            .visit(|p, _| {
                rel.push(p.to_string());
                Ok(())
            })
            .unwrap();
        assert_eq!(rel, ["sub", "x"]);
        // an error from the callback stops the walk
        let mut n = 0;
        let r = root.visit(|_, _| {
            n += 1;
            Err(Error::InvalidArgument("stop".into()))
        });
        assert!(r.is_err() && n == 1);
    }
}
