//! The JSON form of a [`Schedule`]: its fields, their order and their checks (JSON itself is
//! read and written by `json`).
//!
//! Reading treats the text as untrusted (see [`parse`]): an object naming a key twice is an
//! error, a UTF-8 byte order mark is skipped, and an error quotes at most a short prefix of a
//! value from the text.

mod parse;
mod value;

use crate::json::Value;

use self::parse::Fields;
use self::value::Shallow;
use super::FailureKind;
use super::{Build, Decision, FORMAT, Schedule, ScheduleError, Settings, Signature, VERSION};
use crate::op::PickKind;
use crate::settings::Clock;

/// Writes the fields in the documented order (`format` first), one decision per line, so
/// that diffs stay readable.
pub(super) fn write(s: &Schedule) -> String {
    let header = [
        ("format", Value::from(FORMAT)),
        ("version", Value::from(s.version)),
        ("crate_version", Value::from(s.crate_version.as_str())),
        ("test", Value::from(s.test.as_deref())),
        ("strategy", Value::from(s.strategy.as_str())),
        ("seed", Value::from(s.seed)),
        ("iteration", Value::from(s.iteration)),
    ];
    let settings = [
        ("max_steps", s.settings.max_steps.map(Value::from)),
        (
            "thread_panics_fail",
            s.settings.thread_panics_fail.map(Value::from),
        ),
        (
            "spurious_wakeups",
            s.settings.spurious_wakeups.map(Value::from),
        ),
        ("fair_spins", s.settings.fair_spins.map(Value::from)),
        // Only when not the default, so that files of the loaded clock read as before.
        (
            "clock",
            (s.settings.clock != Clock::Loaded).then(|| Value::from(s.settings.clock.name())),
        ),
    ];
    let failure = s.failure.as_ref();
    let recorded = [
        (
            "failure_kind",
            failure.map(|f| Value::from(f.kind.to_string())),
        ),
        (
            "failure_thread",
            failure.and_then(|f| f.thread.as_deref()).map(Value::from),
        ),
        (
            "failure_thread_id",
            failure
                .and_then(|f| f.thread_id)
                .map(|t| Value::from(t as u64)),
        ),
        (
            "failure_what",
            failure.map(|f| Value::from(f.what.as_str())),
        ),
        ("cfg_interleave", s.build.cfg_interleave.map(Value::from)),
        ("release", s.build.release.map(Value::from)),
    ];
    let header = header.into_iter().chain(
        settings
            .into_iter()
            .chain(recorded)
            .filter_map(|(k, v)| v.map(|v| (k, v))),
    );
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
    let mut fields = vec![
        ("thread", Value::from(d.thread as u64)),
        ("step", Value::from(d.step)),
        ("of", Value::from(d.options as u64)),
    ];
    if let Some((kind, value)) = d.pick {
        fields.push(("pick", Value::from(kind.name())));
        fields.push(("value", Value::from(value as u64)));
    }
    fields.extend([
        ("name", Value::from(d.name.as_deref())),
        ("op", Value::from(d.op.as_str())),
        ("at", Value::from(d.location.as_str())),
    ]);
    let fields: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("\"{key}\": {value}"))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// Reads a schedule from JSON text.
pub(super) fn read(text: &str) -> Result<Schedule, ScheduleError> {
    // Editors on Windows may start UTF-8 text with a byte order mark; it carries nothing.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ScheduleError::Empty);
    }
    let doc = parse::document(text)?;
    let fields = &doc.fields;
    check_format(fields)?;
    let version = check_version(fields)?;
    let decisions = doc
        .decisions
        .unwrap_or_else(|| Err(ScheduleError::field("decisions", "is missing")))?;
    Ok(Schedule {
        version,
        crate_version: string(fields, "crate_version", "crate_version")?,
        test: opt_string(fields, "test", "test")?,
        strategy: string(fields, "strategy", "strategy")?,
        seed: opt_u64(fields, "seed", "seed")?,
        iteration: u64_field(fields, "iteration", "iteration")?,
        settings: Settings {
            max_steps: opt_u64(fields, "max_steps", "max_steps")?,
            thread_panics_fail: opt_bool(fields, "thread_panics_fail")?,
            spurious_wakeups: opt_bool(fields, "spurious_wakeups")?,
            fair_spins: opt_bool(fields, "fair_spins")?,
            clock: clock(fields)?,
        },
        failure: signature(fields)?,
        build: Build {
            cfg_interleave: opt_bool(fields, "cfg_interleave")?,
            release: opt_bool(fields, "release")?,
        },
        decisions,
    })
}

/// The clock the file records, the loaded one if it records none.
fn clock(fields: &Fields) -> Result<Clock, ScheduleError> {
    let Some(name) = opt_string(fields, "clock", "clock")? else {
        return Ok(Clock::Loaded);
    };
    Clock::from_name(&name).ok_or_else(|| {
        ScheduleError::field(
            "clock",
            format!(
                "should be \"loaded\" or \"paused\", found {}",
                super::error::quote(&name)
            ),
        )
    })
}

/// The recorded failure's signature, if the file has one (`failure_kind` present).
fn signature(fields: &Fields) -> Result<Option<Signature>, ScheduleError> {
    let Some(name) = opt_string(fields, "failure_kind", "failure_kind")? else {
        return Ok(None);
    };
    let Some(kind) = FailureKind::from_name(&name) else {
        let known: Vec<String> = FailureKind::ALL
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect();
        return Err(ScheduleError::field(
            "failure_kind",
            format!(
                "should be one of {}, found {}",
                known.join(", "),
                super::error::quote(&name)
            ),
        ));
    };
    let thread_id = opt_u64(fields, "failure_thread_id", "failure_thread_id")?;
    Ok(Some(Signature {
        kind,
        thread: opt_string(fields, "failure_thread", "failure_thread")?,
        thread_id: thread_id.and_then(|t| usize::try_from(t).ok()),
        what: opt_string(fields, "failure_what", "failure_what")?.unwrap_or_default(),
    }))
}

fn check_format(fields: &Fields) -> Result<(), ScheduleError> {
    match fields.get("format") {
        Some(Shallow::String(f)) if f == FORMAT => Ok(()),
        Some(other) => Err(ScheduleError::NotASchedule {
            found: Some(other.to_string()),
        }),
        None => Err(ScheduleError::NotASchedule { found: None }),
    }
}

/// The format version, if this crate reads it: only [`VERSION`].
fn check_version(fields: &Fields) -> Result<u64, ScheduleError> {
    let Some(v) = fields.get("version") else {
        return Err(ScheduleError::field("version", "is missing"));
    };
    match v.as_u64() {
        Some(VERSION) => Ok(VERSION),
        Some(found) if found < VERSION => Err(ScheduleError::OldFormat {
            found,
            supported: VERSION,
        }),
        Some(_) => Err(ScheduleError::UnsupportedVersion {
            found: v.to_string(),
            supported: VERSION,
        }),
        None => Err(ScheduleError::field(
            "version",
            format!("should be a non-negative integer, found {v}"),
        )),
    }
}

/// The decision with index `i`, from its fields.
fn decision(i: usize, d: &Fields) -> Result<Decision, ScheduleError> {
    let path = |f: &str| format!("decisions[{i}].{f}");
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
    let options = usize::try_from(options).unwrap_or(usize::MAX);
    Ok(Decision {
        thread,
        step: u64_field(d, "step", &path("step"))?,
        pick: pick(d, options, &path)?,
        options,
        name: opt_string(d, "name", &path("name"))?,
        op: string(d, "op", &path("op"))?,
        location: string(d, "at", &path("at"))?,
    })
}

/// The `pick` and `value` of a decision that is not the choice of a thread, if it has them.
fn pick(
    d: &Fields,
    options: usize,
    path: &dyn Fn(&str) -> String,
) -> Result<Option<(PickKind, usize)>, ScheduleError> {
    let Some(name) = opt_string(d, "pick", &path("pick"))? else {
        if d.contains_key("value") {
            return Err(ScheduleError::field(
                path("value"),
                "is given without `pick` (only a decision other than a thread's has a value)",
            ));
        }
        return Ok(None);
    };
    let Some(kind) = PickKind::from_name(&name) else {
        let known: Vec<String> = PickKind::ALL
            .iter()
            .map(|k| format!("\"{}\"", k.name()))
            .collect();
        return Err(ScheduleError::field(
            path("pick"),
            format!(
                "should be one of {}, found {}",
                known.join(", "),
                super::error::quote(&name)
            ),
        ));
    };
    let value = u64_field(d, "value", &path("value"))?;
    match usize::try_from(value) {
        Ok(v) if v < options => Ok(Some((kind, v))),
        _ => Err(ScheduleError::field(
            path("value"),
            format!("should be below `of` ({options}), found {value}"),
        )),
    }
}

fn syntax_error(e: &crate::json::Error) -> ScheduleError {
    if e.is_eof() {
        ScheduleError::Truncated {
            line: e.line(),
            column: e.column(),
        }
    } else {
        ScheduleError::Syntax {
            line: e.line(),
            column: e.column(),
            reason: e.reason().to_owned(),
        }
    }
}

fn get<'a>(m: &'a Fields, key: &str, path: &str) -> Result<&'a Shallow, ScheduleError> {
    m.get(key)
        .ok_or_else(|| ScheduleError::field(path, "is missing"))
}

fn string(m: &Fields, key: &str, path: &str) -> Result<String, ScheduleError> {
    match get(m, key, path)? {
        Shallow::String(s) => Ok(s.clone()),
        v => Err(ScheduleError::field(
            path,
            format!("should be a string, found {v}"),
        )),
    }
}

fn opt_string(m: &Fields, key: &str, path: &str) -> Result<Option<String>, ScheduleError> {
    match m.get(key) {
        None | Some(Shallow::Null) => Ok(None),
        Some(_) => string(m, key, path).map(Some),
    }
}

fn u64_field(m: &Fields, key: &str, path: &str) -> Result<u64, ScheduleError> {
    let v = get(m, key, path)?;
    v.as_u64().ok_or_else(|| {
        ScheduleError::field(path, format!("should be a non-negative integer, found {v}"))
    })
}

fn opt_bool(m: &Fields, key: &str) -> Result<Option<bool>, ScheduleError> {
    match m.get(key) {
        None | Some(Shallow::Null) => Ok(None),
        Some(Shallow::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(ScheduleError::field(
            key,
            format!("should be true or false, found {v}"),
        )),
    }
}

fn opt_u64(m: &Fields, key: &str, path: &str) -> Result<Option<u64>, ScheduleError> {
    match m.get(key) {
        None | Some(Shallow::Null) => Ok(None),
        Some(_) => u64_field(m, key, path).map(Some),
    }
}
