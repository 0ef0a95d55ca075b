//! Small helpers several medh5 commands share, with no room of their own:
//! sizes and tables as the reference prints them, the clock, and dtype names.

use crate::integrity::is_bool_enum;
use purehdf::low_level::datatype::Datatype;

/// Sizes as the reference prints them (`17.7 KiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS.get(u).copied().unwrap_or("TiB"))
}

/// A left-aligned table: header, dashes, rows; columns two spaces apart.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        parts.join("  ")
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    out.push_str(&line(widths.iter().map(|&w| "-".repeat(w)).collect()));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.clone()));
        out.push('\n');
    }
    out
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (proleptic Gregorian), valid for all dates after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// NumPy's name of a dataset type (`int16`, `float32`, `bool`), for messages.
pub fn dtype_name(dt: &Datatype) -> String {
    match dt {
        Datatype::Integer { size, signed, .. } => {
            format!("{}int{}", if *signed { "" } else { "u" }, size * 8)
        }
        Datatype::Float { size, .. } => format!("float{}", size * 8),
        Datatype::Enum { base, members } if is_bool_enum(base, members) => "bool".into(),
        Datatype::Enum { base, .. } => dtype_name(base),
        Datatype::String { .. } | Datatype::VarString { .. } => "object".into(),
        _ => "void".into(),
    }
}
