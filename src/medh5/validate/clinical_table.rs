//! A clinical table as the clinical rules read it (`docs/medh5-format.md`
//! §9): its readable columns and their per-row validity masks.

/// One column of a clinical table.
pub enum Column {
    /// UTF-8 rows (`None` for a row whose bytes are not UTF-8).
    Text(Vec<Option<String>>),
    /// An integer dataset's rows, widened to `i128` so every HDF5 integer
    /// type (up to unsigned 64-bit) fits; e.g. the `*_us` time bounds in
    /// microseconds.
    Ints(Vec<i128>),
    /// A floating-point dataset's rows (e.g. `value_num`).
    Floats(Vec<f64>),
}

/// One clinical table (`clinical/events`, `clinical/documents` or
/// `clinical/links`) as read for validation: its readable columns and their
/// per-row validity masks. Unreadable or oversized columns are left out.
pub struct Table {
    /// The table's name under `clinical/` (`"events"`, `"documents"`,
    /// `"links"`).
    pub name: String,
    /// `(column name, rows)` in byte order of the column names; a string
    /// column is a group of `data` bytes and `offsets`, any other column a
    /// 1-D dataset.
    pub columns: Vec<(String, Column)>,
    /// `(column name, mask)` from `valid/<column>`: row `i` of the column
    /// holds a value when `mask[i]` is non-zero and is null when it is 0.
    pub valid: Vec<(String, Vec<i128>)>,
}

impl Table {
    /// The column named `n`, if the table has a readable one.
    pub fn col(&self, n: &str) -> Option<&Column> {
        self.columns.iter().find(|(c, _)| c == n).map(|(_, c)| c)
    }

    /// Whether row `row` of column `col` holds a value: its `valid` mask entry
    /// is non-zero, or, without a mask, the column exists. Rows past the end
    /// of a mask are null.
    pub fn is_valid(&self, col: &str, row: usize) -> bool {
        match self.valid.iter().find(|(c, _)| c == col) {
            Some((_, v)) => v.get(row).is_some_and(|&x| x != 0),
            None => self.col(col).is_some(),
        }
    }

    /// The text in row `row` of string column `col`; `None` when the column
    /// is missing or not a string column, the row is null or out of range,
    /// or its bytes are not UTF-8.
    pub fn text(&self, col: &str, row: usize) -> Option<&str> {
        match self.col(col)? {
            Column::Text(v) if self.is_valid(col, row) => v.get(row)?.as_deref(),
            _ => None,
        }
    }

    /// The integer in row `row` of integer column `col`; `None` when the
    /// column is missing or not an integer column, or the row is null or out
    /// of range.
    pub fn int(&self, col: &str, row: usize) -> Option<i128> {
        match self.col(col)? {
            Column::Ints(v) if self.is_valid(col, row) => v.get(row).copied(),
            _ => None,
        }
    }

    /// The number of rows: the length of the longest column (0 for a table
    /// without readable columns).
    pub fn rows(&self) -> usize {
        self.columns
            .iter()
            .map(|(_, c)| match c {
                Column::Text(v) => v.len(),
                Column::Ints(v) => v.len(),
                Column::Floats(v) => v.len(),
            })
            .max()
            .unwrap_or(0)
    }
}
