//! Every structural fault of a JSON catalog at once: serde stops at the
//! first wrong type, unknown field or missing field, so a file with three was refused three
//! times over. When the whole file does not deserialize, each instance, GPU and currency is
//! tried on its own (serde_json's `RawValue` keeps where in the text each one is, so a fault
//! still names its line and column), then the top level without them; every fault is named.

use super::{Catalog, Currency, GpuSpec, Instance};
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// The faults of a catalog file that is valid JSON, each `line L, column C, at JSON path
/// `p`: what`; None when the text is not a JSON object at all (the parser's own message
/// says where).
pub(super) fn faults(text: &str) -> Option<Vec<String>> {
    let top: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    let mut out = Vec::new();
    let mut rest = serde_json::Map::new();
    for (key, raw) in &top {
        let done = match key.as_str() {
            "instances" => each::<Instance>(text, raw, key, &mut out),
            "gpus" => each::<GpuSpec>(text, raw, key, &mut out),
            "currencies" => rates(text, raw, &mut out),
            _ => false,
        };
        // A list checked element by element stands empty in the top level's own check.
        let v = if done {
            match key.as_str() {
                "currencies" => Value::Object(Default::default()),
                _ => Value::Array(Vec::new()),
            }
        } else {
            serde_json::from_str(raw.get()).ok()?
        };
        rest.insert(key.clone(), v);
    }
    if let Err(e) = serde_path_to_error::deserialize::<_, Catalog>(&Value::Object(rest)) {
        let path = e.path().to_string();
        out.insert(0, format!("at JSON path `{path}`: {}", e.into_inner()));
    }
    Some(out)
}

/// Each element of the list `raw` (named `key`) as a `T`, its fault if it is none; false
/// when `raw` is no list.
fn each<T: DeserializeOwned>(text: &str, raw: &RawValue, key: &str, out: &mut Vec<String>) -> bool {
    let Ok(list) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
        return false;
    };
    for (i, x) in list.iter().enumerate() {
        if let Some(f) = one::<T>(text, x, &format!("{key}[{i}]")) {
            out.push(f);
        }
    }
    true
}

/// Each currency rate; false when `raw` is no object.
fn rates(text: &str, raw: &RawValue, out: &mut Vec<String>) -> bool {
    let Ok(m) = serde_json::from_str::<BTreeMap<String, &RawValue>>(raw.get()) else {
        return false;
    };
    for (code, x) in &m {
        if let Some(f) = one::<Currency>(text, x, &format!("currencies.{code}")) {
            out.push(f);
        }
    }
    true
}

/// `x` (a slice of `text`) as a `T`: its fault, placed in the whole file, if it is none.
fn one<T: DeserializeOwned>(text: &str, x: &RawValue, prefix: &str) -> Option<String> {
    let de = &mut serde_json::Deserializer::from_str(x.get());
    let e = serde_path_to_error::deserialize::<_, T>(de).err()?;
    let inner = e.path().to_string();
    let path = if inner == "." {
        prefix.to_string()
    } else {
        format!("{prefix}.{inner}")
    };
    let e = e.into_inner();
    // Where the element starts in the file, then where in it serde stopped.
    let start = (x.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let before = &text[..start.min(text.len())];
    let line0 = before.matches('\n').count() + 1;
    let col0 = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    let (line, column) = if e.line() <= 1 {
        (line0, col0 + e.column().saturating_sub(1))
    } else {
        (line0 + e.line() - 1, e.column())
    };
    // serde_json's message ends with where it stopped in the slice: said above for the file.
    let msg = e.to_string();
    let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    Some(format!(
        "line {line}, column {column}, at JSON path `{path}`: {msg}"
    ))
}
