//! The text form of `medh5 info` (`docs/medh5-format.md` §10), as the
//! reference prints it: header lines, then tables two spaces apart.

use serde_json::Value;

use super::len_of;
use crate::helpers::human_bytes;
use crate::profiles::describe_pipeline;
use crate::sample::SampleFile;
use purehdf::low_level::file::File;

/// One table: its title, its column heads and its rows.
type Section<'a> = (&'a str, &'a [&'a str], Vec<Vec<String>>);

/// Plain-text rendering of an `info` object, as the reference prints it: the
/// header lines, then a table per section (timepoints, grids, images; then
/// annotations and transforms when there are any), the derived indices and
/// the label set.
/// `file` is the sample the object describes: the images' codec column is
/// read from their stored pipelines.
pub fn info_text(file: &File, v: &Value) -> String {
    let s = SampleFile::from_file(file.clone());
    let mut t = String::new();
    t.push_str(&format!("{}\n", cell(&v["path"])));
    t.push_str(&format!(
        "  format      {} ({})\n",
        cell(&v["version"]),
        cell(&v["kind"])
    ));
    t.push_str(&format!("  profiles    {}\n", joined(&v["profiles"], ", ")));
    t.push_str(&format!(
        "  sample      {}  subject {}\n",
        cell(&v["sample_id"]),
        cell(&v["subject_id"])
    ));
    t.push_str(&format!("  content_id  {}\n", cell(&v["content_id"])));
    let rows = |key: &str, f: &dyn Fn(&Value) -> Vec<String>| -> Vec<Vec<String>> {
        v[key]
            .as_array()
            .map_or(Vec::new(), |a| a.iter().map(f).collect())
    };
    let sections: [Section<'_>; 5] = [
        (
            "timepoints",
            &["id", "index", "label", "days"],
            rows("timepoints", &|x| {
                vec![
                    cell(&x["id"]),
                    cell(&x["index"]),
                    cell(&x["label"]),
                    cell(&x["days_from_baseline"]),
                ]
            }),
        ),
        (
            "grids",
            &[
                "id",
                "shape",
                "spacing",
                "system",
                "units",
                "timepoint",
                "frame",
            ],
            rows("grids", &|x| {
                vec![
                    cell(&x["id"]),
                    shape_cell(&x["shape"]),
                    x["spacing"].as_array().map_or("-".into(), |a| {
                        a.iter().map(cell).collect::<Vec<_>>().join(" ")
                    }),
                    cell(&x["coord_system"]),
                    cell(&x["units"]),
                    cell(&x["timepoint"]),
                    cell(&x["frame_uid"]),
                ]
            }),
        ),
        (
            "images",
            &[
                "id", "mod", "shape", "dtype", "units", "grid", "codec", "raw",
            ],
            rows("images", &|x| {
                let codec = x["id"]
                    .as_str()
                    .and_then(|id| s.image(id).ok())
                    .map_or("-".into(), |ds| describe_pipeline(ds.filters()));
                vec![
                    cell(&x["id"]),
                    cell(&x["modality"]),
                    shape_cell(&x["shape"]),
                    cell(&x["dtype"]),
                    cell(&x["value_units"]),
                    cell(&x["grid"]),
                    codec,
                    x["nbytes"].as_u64().map_or("-".into(), human_bytes),
                ]
            }),
        ),
        (
            "annotations",
            &[
                "id", "kind", "task", "grid", "tp", "cover", "full", "quality",
            ],
            rows("annotations", &|x| {
                vec![
                    cell(&x["id"]),
                    cell(&x["kind"]),
                    cell(&x["task"]),
                    cell(&x["grid"]),
                    or_dash(joined(&x["timepoints"], ",")),
                    format!("{}/{}", cell(&x["annotated_classes"]), cell(&x["classes"])),
                    match &x["fully_covered"] {
                        Value::Bool(false) => "PARTIAL".into(),
                        other => yes_no(other),
                    },
                    cell(&x["quality"]),
                ]
            }),
        ),
        (
            "transforms",
            &["id", "kind", "from", "to", "tp", "inv", "metrics"],
            rows("transforms", &|x| {
                vec![
                    cell(&x["id"]),
                    cell(&x["kind"]),
                    cell(&x["from_frame"]),
                    cell(&x["to_frame"]),
                    or_dash(joined(&x["timepoints"], ",")),
                    yes_no(&x["invertible"]),
                    cell(&x["metrics"]),
                ]
            }),
        ),
    ];
    for (title, head, body) in &sections {
        // timepoints, grids and images are listed even when empty
        let always = matches!(*title, "timepoints" | "grids" | "images");
        if always || !body.is_empty() {
            t.push_str(&format!("\n{title}\n"));
            t.push_str(&table(head, body));
        }
    }
    if len_of(&v["index"]) > 0 {
        t.push_str(&format!("\nindex        {}\n", joined(&v["index"], ", ")));
    }
    let ls = &v["label_set"];
    if ls.is_object() {
        t.push_str(&format!(
            "\nlabel set    {} v{} ({} classes, {})\n",
            cell(&ls["id"]),
            cell(&ls["version"]),
            cell(&ls["classes"]),
            cell(&ls["form"])
        ));
    }
    t
}

/// One table cell: strings as they are, numbers as Python's `%g` (`2`,
/// `0.8`, `2.46365`), null as `-`.
fn cell(x: &Value) -> String {
    match x {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) if n.is_f64() => n.as_f64().map_or("-".into(), fmt_g),
        other => other.to_string(),
    }
}

fn joined(x: &Value, sep: &str) -> String {
    x.as_array().map_or(String::new(), |a| {
        a.iter().map(cell).collect::<Vec<_>>().join(sep)
    })
}

fn or_dash(s: String) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}

fn shape_cell(x: &Value) -> String {
    x.as_array().map_or("-".into(), |a| {
        a.iter().map(cell).collect::<Vec<_>>().join("x")
    })
}

fn yes_no(x: &Value) -> String {
    match x {
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        other => cell(other),
    }
}

/// Python's `"%g" % f`: 6 significant digits, trailing zeros dropped,
/// exponent form below 1e-4 and from 1e6.
fn fmt_g(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "nan".into()
        } else if f > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{f:.5e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mant), exp.abs());
    }
    let decimals = usize::try_from(5 - exp).unwrap_or(0);
    trim(&format!("{f:.decimals$}"))
}

/// Columns two spaces apart, every cell padded to its column's width, under
/// a line of dashes; each line indented by two spaces.
fn table(head: &[&str], body: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in body {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = String>| -> String {
        let parts: Vec<String> = cells
            .zip(&width)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        format!("  {}\n", parts.join("  "))
    };
    let mut t = line(&mut head.iter().map(|h| h.to_string()));
    t.push_str(&line(&mut width.iter().map(|&w| "-".repeat(w))));
    for row in body {
        t.push_str(&line(&mut row.iter().cloned()));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_python_percent_g() {
        for (f, want) in [
            (2.0, "2"),
            (0.8, "0.8"),
            (2.463_648_9, "2.46365"),
            (92.0, "92"),
            (-1.5, "-1.5"),
            (1e-5, "1e-05"),
            (123_456.0, "123456"),
            (1_234_567.0, "1.23457e+06"),
            (0.000_123_4, "0.0001234"),
            (0.0, "0"),
        ] {
            assert_eq!(fmt_g(f), want, "{f}");
        }
    }

    #[test]
    fn tables_pad_every_cell() {
        let t = table(
            &["id", "days"],
            &[
                vec!["tp0".into(), "-".into()],
                vec!["tp12".into(), "92".into()],
            ],
        );
        assert_eq!(
            t,
            "  id    days\n  ----  ----\n  tp0   -   \n  tp12  92  \n"
        );
    }
}
