//! Where the writer's bytes go: a growing buffer or a file, written by
//! appending (positions only grow) with in-place patches for the few
//! structures written after their space was reserved (the superblock, global
//! heap collections).

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};

enum SinkKind {
    Memory(Vec<u8>),
    File(BufWriter<File>),
}

/// Where serialised bytes go: a growing buffer or a file.
pub struct Sink {
    kind: SinkKind,
    /// Address of the first byte of a memory sink's buffer (0 but for
    /// [`Sink::memory_at`]).
    base: u64,
    pos: u64,
    fail_at: Option<u64>,
}

impl Sink {
    /// An in-memory sink.
    pub fn memory() -> Sink {
        Sink {
            kind: SinkKind::Memory(Vec::new()),
            base: 0,
            pos: 0,
            fail_at: None,
        }
    }

    /// An in-memory sink whose first byte has address `base`: the bytes an
    /// editor appends to an existing file whose end is at `base`.
    pub fn memory_at(base: u64) -> Sink {
        Sink {
            kind: SinkKind::Memory(Vec::new()),
            base,
            pos: base,
            fail_at: None,
        }
    }

    /// A sink writing to `file` from offset 0.
    pub fn file(file: File) -> Sink {
        Sink {
            kind: SinkKind::File(BufWriter::with_capacity(1 << 20, file)),
            base: 0,
            pos: 0,
            fail_at: None,
        }
    }

    /// Make every write that would end past `bytes` fail (for tests).
    pub fn fail_after(&mut self, bytes: Option<u64>) {
        self.fail_at = bytes;
    }

    /// Current end of file.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    fn check(&self, end: u64) -> Result<()> {
        match self.fail_at {
            Some(limit) if end > limit => Err(Error::io(
                "write",
                std::io::Error::other("injected write failure"),
            )),
            _ => Ok(()),
        }
    }

    /// Append `bytes`, returning their address.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let addr = self.pos;
        let end = addr + bytes.len() as u64;
        self.check(end)?;
        match &mut self.kind {
            SinkKind::Memory(v) => v.extend_from_slice(bytes),
            SinkKind::File(w) => w.write_all(bytes).map_err(|e| Error::io("write", e))?,
        }
        self.pos = end;
        Ok(addr)
    }

    /// Append `n` zero bytes to be filled later with [`Sink::write_at`].
    pub fn reserve(&mut self, n: u64) -> Result<u64> {
        let addr = self.pos;
        self.check(addr + n)?;
        match &mut self.kind {
            SinkKind::Memory(v) => v.resize(v.len() + n as usize, 0),
            SinkKind::File(w) => {
                let zeros = [0u8; 4096];
                let mut left = n;
                while left > 0 {
                    let k = left.min(4096) as usize;
                    w.write_all(&zeros[..k])
                        .map_err(|e| Error::io("write", e))?;
                    left -= k as u64;
                }
            }
        }
        self.pos += n;
        Ok(addr)
    }

    /// Overwrite already written bytes at `addr`.
    pub fn write_at(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        let end = addr + bytes.len() as u64;
        if end > self.pos || addr < self.base {
            return Err(Error::InvalidArgument("write_at outside the sink".into()));
        }
        self.check(end)?;
        match &mut self.kind {
            SinkKind::Memory(v) => {
                v[(addr - self.base) as usize..(end - self.base) as usize].copy_from_slice(bytes)
            }
            SinkKind::File(w) => {
                let io = |e| Error::io("write", e);
                w.seek(SeekFrom::Start(addr)).map_err(io)?;
                w.write_all(bytes).map_err(io)?;
                w.seek(SeekFrom::Start(self.pos)).map_err(io)?;
            }
        }
        Ok(())
    }

    /// The bytes of an in-memory sink.
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        match self.kind {
            SinkKind::Memory(v) => Ok(v),
            SinkKind::File(_) => Err(Error::InvalidArgument("not an in-memory sink".into())),
        }
    }

    /// Flush and return the file of a file sink.
    pub fn into_file(self) -> Result<File> {
        match self.kind {
            SinkKind::File(w) => w
                .into_inner()
                .map_err(|e| Error::io("flush", e.into_error())),
            SinkKind::Memory(_) => Err(Error::InvalidArgument("not a file sink".into())),
        }
    }
}
