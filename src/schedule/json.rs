//! The JSON form of a [`Schedule`]: the only code in the crate that knows JSON.

use serde_json::{json, Map, Value};

use super::{Decision, Schedule, ScheduleError, FORMAT, VERSION};

pub(super) fn write(s: &Schedule) -> String {
    let decisions: Vec<Value> = s
        .decisions
        .iter()
        .map(|d| {
            json!({
                "thread": d.thread,
                "step": d.step,
                "of": d.options,
                "name": d.name,
                "op": d.op,
                "at": d.location,
            })
        })
        .collect();
    let doc = json!({
        "format": FORMAT,
        "version": VERSION,
        "crate_version": s.crate_version,
        "test": s.test,
        "strategy": s.strategy,
        "seed": s.seed,
        "iteration": s.iteration,
        "decisions": decisions,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value always serializes");
    text.push('\n');
    text
}

pub(super) fn read(text: &str) -> Result<Schedule, ScheduleError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| syntax_error(&e))?;
    let Value::Object(doc) = doc else {
        return Err(ScheduleError::NotASchedule { found: None });
    };
    match doc.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => {
            let found = other.as_str().map_or_else(|| other.to_string(), str::to_owned);
            return Err(ScheduleError::NotASchedule { found: Some(found) });
        }
        None => return Err(ScheduleError::NotASchedule { found: None }),
    }
    match doc.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(ScheduleError::UnsupportedVersion { found: v.to_string(), supported: VERSION });
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
        return Err(ScheduleError::field(format!("decisions[{i}]"), format!("should be an object, found {v}")));
    };
    let thread = u64_field(d, "thread", &path("thread"))?;
    let thread = usize::try_from(thread)
        .map_err(|_| ScheduleError::field(path("thread"), "is too large for a thread id"))?;
    let options = u64_field(d, "of", &path("of"))?;
    if options < 2 {
        return Err(ScheduleError::field(path("of"), format!("should be at least 2 (a decision has a choice), found {options}")));
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
        ScheduleError::Truncated { line: e.line(), column: e.column() }
    } else {
        let reason = e.to_string();
        let reason = reason.split(" at line ").next().unwrap_or(&reason).to_owned();
        ScheduleError::Syntax { line: e.line(), column: e.column(), reason }
    }
}

fn get<'a>(m: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a Value, ScheduleError> {
    m.get(key).ok_or_else(|| ScheduleError::field(path, "is missing"))
}

fn array<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a Vec<Value>, ScheduleError> {
    match get(m, key, key)? {
        Value::Array(a) => Ok(a),
        v => Err(ScheduleError::field(key, format!("should be an array, found {v}"))),
    }
}

fn string(m: &Map<String, Value>, key: &str, path: &str) -> Result<String, ScheduleError> {
    match get(m, key, path)? {
        Value::String(s) => Ok(s.clone()),
        v => Err(ScheduleError::field(path, format!("should be a string, found {v}"))),
    }
}

fn opt_string(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, ScheduleError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(m, key, path).map(Some),
    }
}

fn u64_field(m: &Map<String, Value>, key: &str, path: &str) -> Result<u64, ScheduleError> {
    let v = get(m, key, path)?;
    v.as_u64().ok_or_else(|| ScheduleError::field(path, format!("should be a non-negative integer, found {v}")))
}

fn opt_u64(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, ScheduleError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => u64_field(m, key, path).map(Some),
    }
}
