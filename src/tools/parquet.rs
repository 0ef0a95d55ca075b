//! A minimal Apache Parquet writer (format 2, one row group, one data page
//! per column, PLAIN values, definition levels as RLE/bit-packed hybrid, no
//! compression; the file metadata in Thrift's compact protocol): just what a
//! kerchunk reference table needs — optional UTF-8 and byte-array columns
//! and required 64-bit integer columns.

/// One column of a table.
pub enum Column<'a> {
    /// Optional UTF-8 strings (`None` is null).
    Utf8(&'a [Option<String>]),
    /// Optional byte strings (`None` is null).
    Bytes(&'a [Option<Vec<u8>>]),
    /// Required 64-bit integers.
    I64(&'a [i64]),
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::Utf8(v) => v.len(),
            Column::Bytes(v) => v.len(),
            Column::I64(v) => v.len(),
        }
    }

    /// Parquet physical type: BYTE_ARRAY (6) or INT64 (2).
    fn physical(&self) -> i32 {
        match self {
            Column::I64(_) => 2,
            _ => 6,
        }
    }

    fn optional(&self) -> bool {
        !matches!(self, Column::I64(_))
    }

    fn nulls(&self) -> usize {
        match self {
            Column::Utf8(v) => v.iter().filter(|x| x.is_none()).count(),
            Column::Bytes(v) => v.iter().filter(|x| x.is_none()).count(),
            Column::I64(_) => 0,
        }
    }

    /// The data page body: definition levels (optional columns), then the
    /// non-null values, PLAIN.
    fn page(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let bytes = |v: Option<&[u8]>, levels: &mut Vec<bool>, vals: &mut Vec<u8>| {
            levels.push(v.is_some());
            if let Some(b) = v {
                vals.extend_from_slice(&(b.len() as u32).to_le_bytes());
                vals.extend_from_slice(b);
            }
        };
        let (mut levels, mut vals) = (Vec::new(), Vec::new());
        match self {
            Column::Utf8(v) => v
                .iter()
                .for_each(|s| bytes(s.as_deref().map(str::as_bytes), &mut levels, &mut vals)),
            Column::Bytes(v) => v
                .iter()
                .for_each(|s| bytes(s.as_deref(), &mut levels, &mut vals)),
            Column::I64(v) => v
                .iter()
                .for_each(|x| vals.extend_from_slice(&x.to_le_bytes())),
        }
        if self.optional() {
            let rle = bit_packed_levels(&levels);
            out.extend_from_slice(&(rle.len() as u32).to_le_bytes());
            out.extend_from_slice(&rle);
        }
        out.extend_from_slice(&vals);
        out
    }
}

/// Levels of bit width 1 as one bit-packed run of the RLE/bit-packed hybrid.
fn bit_packed_levels(levels: &[bool]) -> Vec<u8> {
    let groups = levels.len().div_ceil(8);
    let mut out = Vec::with_capacity(groups + 5);
    varint(&mut out, ((groups as u64) << 1) | 1);
    let mut packed = vec![0u8; groups];
    for (i, &l) in levels.iter().enumerate() {
        if l {
            packed[i / 8] |= 1 << (i % 8);
        }
    }
    out.extend_from_slice(&packed);
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Thrift compact protocol, the subset Parquet's metadata uses.
#[derive(Default)]
struct Thrift {
    out: Vec<u8>,
    last: Vec<i16>,
}

impl Thrift {
    fn field(&mut self, id: i16, ty: u8) {
        let last = self.last.last().copied().unwrap_or(0);
        let delta = id - last;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | ty);
        } else {
            self.out.push(ty);
            self.zigzag(i64::from(id));
        }
        if let Some(l) = self.last.last_mut() {
            *l = id;
        }
    }
    fn zigzag(&mut self, v: i64) {
        varint(&mut self.out, ((v << 1) ^ (v >> 63)) as u64);
    }
    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, 5);
        self.zigzag(i64::from(v));
    }
    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, 6);
        self.zigzag(v);
    }
    fn bin(&mut self, id: i16, b: &[u8]) {
        self.field(id, 8);
        self.raw_bin(b);
    }
    fn raw_bin(&mut self, b: &[u8]) {
        varint(&mut self.out, b.len() as u64);
        self.out.extend_from_slice(b);
    }
    fn list(&mut self, id: i16, elem: u8, n: usize) {
        self.field(id, 9);
        if n < 15 {
            self.out.push(((n as u8) << 4) | elem);
        } else {
            self.out.push(0xF0 | elem);
            varint(&mut self.out, n as u64);
        }
    }
    /// Open a struct: a field of one (`Some(id)`) or a list element (`None`).
    fn begin(&mut self, id: Option<i16>) {
        if let Some(id) = id {
            self.field(id, 12);
        }
        self.last.push(0);
    }
    fn end(&mut self) {
        self.out.push(0);
        self.last.pop();
    }
}

/// A whole Parquet file holding `cols` (name, values), all of one length.
pub fn table(cols: &[(&str, Column<'_>)]) -> Vec<u8> {
    let rows = cols.first().map_or(0, |(_, c)| c.len());
    let mut file = b"PAR1".to_vec();
    let mut chunks = Vec::new();
    for (_, c) in cols {
        let body = c.page();
        let mut h = Thrift::default();
        h.begin(None);
        h.i32(1, 0); // DATA_PAGE
        h.i32(2, body.len() as i32);
        h.i32(3, body.len() as i32);
        h.begin(Some(5));
        h.i32(1, rows as i32);
        h.i32(2, 0); // PLAIN
        h.i32(3, 3); // RLE
        h.i32(4, 3);
        h.end();
        h.end();
        let at = file.len() as i64;
        let size = (h.out.len() + body.len()) as i64;
        file.extend_from_slice(&h.out);
        file.extend_from_slice(&body);
        chunks.push((at, size));
    }
    let mut m = Thrift::default();
    m.begin(None);
    m.i32(1, 1);
    m.list(2, 12, cols.len() + 1);
    m.begin(None);
    m.bin(4, b"schema");
    m.i32(5, cols.len() as i32);
    m.end();
    for (name, c) in cols {
        m.begin(None);
        m.i32(1, c.physical());
        m.i32(3, i32::from(c.optional())); // OPTIONAL or REQUIRED
        m.bin(4, name.as_bytes());
        if matches!(c, Column::Utf8(_)) {
            m.i32(6, 0); // UTF8
        }
        m.end();
    }
    m.i64(3, rows as i64);
    m.list(4, 12, 1);
    m.begin(None);
    m.list(1, 12, cols.len());
    let mut total = 0i64;
    for ((name, c), &(at, size)) in cols.iter().zip(&chunks) {
        total += size;
        m.begin(None);
        m.i64(2, at);
        m.begin(Some(3));
        m.i32(1, c.physical());
        m.list(2, 5, 2);
        m.zigzag(0); // PLAIN
        m.zigzag(3); // RLE
        m.list(3, 8, 1);
        m.raw_bin(name.as_bytes());
        m.i32(4, 0); // UNCOMPRESSED
        m.i64(5, rows as i64);
        m.i64(6, size);
        m.i64(7, size);
        m.i64(9, at);
        // statistics: the null count (readers such as fastparquet otherwise
        // assume nulls and widen integers to floats)
        m.begin(Some(12));
        m.i64(3, c.nulls() as i64);
        m.end();
        m.end();
        m.end();
    }
    m.i64(2, total);
    m.i64(3, rows as i64);
    m.end();
    m.bin(6, b"purehdf");
    m.end();
    file.extend_from_slice(&m.out);
    file.extend_from_slice(&(m.out.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    file
}
