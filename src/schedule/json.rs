//! The JSON form of a [`Schedule`]: the only code in the crate that knows JSON.

use serde_json::{Map, Value, json};

use super::{Decision, FORMAT, Schedule, ScheduleError, VERSION};

/// Writes the fields in the documented order (`format` first), one decision per line, so
/// the text does not depend on how `serde_json` orders map keys and diffs stay readable.
pub(super) fn write(s: &Schedule) -> String {
    let header = [
        ("format", json!(FORMAT)),
        ("version", json!(VERSION)),
        ("crate_version", json!(s.crate_version)),
        ("test", json!(s.test)),
        ("strategy", json!(s.strategy)),
        ("seed", json!(s.seed)),
        ("iteration", json!(s.iteration)),
    ];
    let mut text = String::from("{\n");
    for (key, value) in header {
        text.push_str(&format!("  \"{key}\": {value},\n"));
    }
    let decisions: Vec<String> = s
        .decisions
        .iter()
        .map(|d| format!("    {}", decision_line(d)))
        .collect();
    if decisions.is_empty() {
        text.push_str("  \"decisions\": []\n}\n");
    } else {
        text.push_str(&format!(
            "  \"decisions\": [\n{}\n  ]\n}}\n",
            decisions.join(",\n")
        ));
    }
    text
}

fn decision_line(d: &Decision) -> String {
    let fields = [
        ("thread", json!(d.thread)),
        ("step", json!(d.step)),
        ("of", json!(d.options)),
        ("name", json!(d.name)),
        ("op", json!(d.op)),
        ("at", json!(d.location)),
    ];
    let fields: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("\"{key}\": {value}"))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

pub(super) fn read(text: &str) -> Result<Schedule, ScheduleError> {
    if text.trim().is_empty() {
        return Err(ScheduleError::Empty);
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| syntax_error(&e))?;
    let Value::Object(doc) = doc else {
        return Err(ScheduleError::NotASchedule { found: None });
    };
    match doc.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => {
            let found = other
                .as_str()
                .map_or_else(|| other.to_string(), str::to_owned);
            return Err(ScheduleError::NotASchedule { found: Some(found) });
        }
        None => return Err(ScheduleError::NotASchedule { found: None }),
    }
    match doc.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) if v.as_u64().is_none() => {
            return Err(ScheduleError::field(
                "version",
                format!("should be a non-negative integer, found {v}"),
            ));
        }
        Some(v) => {
            return Err(ScheduleError::UnsupportedVersion {
                found: v.to_string(),
                supported: VERSION,
            });
        }
        None => return Err(ScheduleError::field("version", "is missing")),
    }
    let decisions = array(&doc, "decisions")?
        .iter()
        .enumerate()
        .map(|(i, d)| decision(i, d))
        .collect::<Result<_, _>>()?;
    Ok(Schedule {
        crate_version: string(&doc, "crate_version", "crate_version")?,
        test: opt_string(&doc, "test", "test")?,
        strategy: string(&doc, "strategy", "strategy")?,
        seed: opt_u64(&doc, "seed", "seed")?,
        iteration: u64_field(&doc, "iteration", "iteration")?,
        decisions,
    })
}

fn decision(i: usize, v: &Value) -> Result<Decision, ScheduleError> {
    let path = |f: &str| format!("decisions[{i}].{f}");
    let Value::Object(d) = v else {
        return Err(ScheduleError::field(
            format!("decisions[{i}]"),
            format!("should be an object, found {v}"),
        ));
    };
    let thread = u64_field(d, "thread", &path("thread"))?;
    let thread = usize::try_from(thread)
        .map_err(|_| ScheduleError::field(path("thread"), "is too large for a thread id"))?;
    let options = u64_field(d, "of", &path("of"))?;
    if options < 2 {
        return Err(ScheduleError::field(
            path("of"),
            format!("should be at least 2 (a decision has a choice), found {options}"),
        ));
    }
    Ok(Decision {
        thread,
        step: u64_field(d, "step", &path("step"))?,
        options: usize::try_from(options).unwrap_or(usize::MAX),
        name: opt_string(d, "name", &path("name"))?,
        op: string(d, "op", &path("op"))?,
        location: string(d, "at", &path("at"))?,
    })
}

fn syntax_error(e: &serde_json::Error) -> ScheduleError {
    if e.is_eof() {
        ScheduleError::Truncated {
            line: e.line(),
            column: e.column(),
        }
    } else {
        let reason = e.to_string();
        let reason = reason
            .split(" at line ")
            .next()
            .unwrap_or(&reason)
            .to_owned();
        ScheduleError::Syntax {
            line: e.line(),
            column: e.column(),
            reason,
        }
    }
}

fn get<'a>(m: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a Value, ScheduleError> {
    m.get(key)
        .ok_or_else(|| ScheduleError::field(path, "is missing"))
}

fn array<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a Vec<Value>, ScheduleError> {
    match get(m, key, key)? {
        Value::Array(a) => Ok(a),
        v => Err(ScheduleError::field(
            key,
            format!("should be an array, found {v}"),
        )),
    }
}

fn string(m: &Map<String, Value>, key: &str, path: &str) -> Result<String, ScheduleError> {
    match get(m, key, path)? {
        Value::String(s) => Ok(s.clone()),
        v => Err(ScheduleError::field(
            path,
            format!("should be a string, found {v}"),
        )),
    }
}

fn opt_string(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<String>, ScheduleError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(m, key, path).map(Some),
    }
}

fn u64_field(m: &Map<String, Value>, key: &str, path: &str) -> Result<u64, ScheduleError> {
    let v = get(m, key, path)?;
    v.as_u64().ok_or_else(|| {
        ScheduleError::field(path, format!("should be a non-negative integer, found {v}"))
    })
}

fn opt_u64(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, ScheduleError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => u64_field(m, key, path).map(Some),
    }
}
