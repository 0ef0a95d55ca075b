//! A depth-first walk over the links of a group and the groups the caller
//! enters, each group's links in byte order of name (the order of libhdf5's
//! name index, and the order medh5's §5.3 walk defines).
//!
//! The walk only hands out links. What a link leads to, which groups are
//! entered, cycle detection and budgets stay with the caller, since each
//! walk judges those differently (first paths, aliases, soft links).

use crate::error::Result;
use crate::group::Group;
use crate::link::Link;

/// Links still to hand out, one list per entered group, innermost last.
#[derive(Debug)]
pub struct LinkWalk {
    pending: Vec<(String, std::vec::IntoIter<(String, Link)>)>,
}

impl LinkWalk {
    /// Start at `group`: its links come first, at paths relative to it
    /// (`name`; `name/child` below a group entered at `name`).
    pub fn new(group: &Group) -> Result<Self> {
        Ok(LinkWalk {
            pending: vec![(String::new(), group.links()?.into_iter())],
        })
    }

    /// The next link: `(relative path, link)`, or `None` when every entered
    /// group is done.
    pub fn next_link(&mut self) -> Option<(String, Link)> {
        loop {
            let (prefix, links) = self.pending.last_mut()?;
            match links.next() {
                Some((name, link)) => {
                    let path = if prefix.is_empty() {
                        name
                    } else {
                        format!("{prefix}/{name}")
                    };
                    return Some((path, link));
                }
                None => {
                    self.pending.pop();
                }
            }
        }
    }

    /// Enter `group`, reached at `path`: its links come next, before the
    /// rest of its parent's.
    pub fn enter(&mut self, path: String, group: &Group) -> Result<()> {
        self.pending.push((path, group.links()?.into_iter()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{File, Object};
    use crate::write::FileWriter;

    #[test]
    fn depth_first_in_byte_order_entering_only_what_the_caller_enters() {
        let mut w = FileWriter::in_memory();
        let r = w.root();
        let b = w.create_group(r, "b").unwrap();
        w.create_group(b, "y").unwrap();
        w.create_group(b, "X").unwrap();
        let a = w.create_group(r, "a").unwrap();
        w.create_group(a, "z").unwrap();
        w.create_group(r, "c").unwrap();
        let f = File::from_bytes(w.finish().unwrap()).unwrap();
        let mut walk = LinkWalk::new(&f.root().unwrap()).unwrap();
        let mut seen = Vec::new();
        while let Some((path, _)) = walk.next_link() {
            // enter everything but `a`
            if path != "a" {
                if let Ok(Object::Group(g)) = f.object(&path) {
                    walk.enter(path.clone(), &g).unwrap();
                }
            }
            seen.push(path);
        }
        assert_eq!(seen, ["a", "b", "b/X", "b/y", "c"]);
    }
}
