//! Reading a schedule document in one pass, as untrusted input.
//!
//! A whole JSON value ([`json::parse`](crate::json::parse)) would do, but it keeps
//! the last of two equal keys silently, and it holds every value of the document: a hostile
//! file of `[0,0,0,...]` would take some 30 times its size in memory. This reader instead
//! walks the text with [`Reader`], and
//! - refuses an object (the document, a decision) that names a key twice, remembering each
//!   object's keys only while it reads that object, and one of more than [`MAX_KEYS`] keys
//!   (a schedule's objects have at most 8, unknown keys are skipped, and remembering
//!   millions of them to find a duplicate would take several times the file's size);
//! - converts each decision as soon as it is read, and after the first one that cannot be
//!   converted skips the others unread;
//! - keeps only the scalars of the known fields ([`Shallow`]): arrays and objects where a
//!   scalar belongs, and the values of unknown keys, are skipped unread.
//!
//! Memory is then the size of the schedule it returns, plus the strings of known fields, plus
//! at most [`MAX_KEYS`] keys; time is linear in the size of the text.

use std::collections::{BTreeMap, BTreeSet};

use super::value::Shallow;
use crate::json::{Kind, Reader, Shape, Value};
use crate::schedule::error::quote;
use crate::schedule::{Decision, ScheduleError};

/// The keys of the document that are read, besides `decisions`.
const HEADER_KEYS: [&str; 18] = [
    "format",
    "version",
    "crate_version",
    "test",
    "strategy",
    "seed",
    "iteration",
    "max_steps",
    "thread_panics_fail",
    "spurious_wakeups",
    "fair_spins",
    "clock",
    "failure_kind",
    "failure_thread",
    "failure_thread_id",
    "failure_what",
    "cfg_interleave",
    "release",
];
/// The keys of a decision that are read.
const DECISION_KEYS: [&str; 8] = ["thread", "step", "of", "pick", "value", "name", "op", "at"];

/// The most keys an object of a schedule may have.
pub(crate) const MAX_KEYS: usize = 64;

/// The known fields of one object, by key.
pub(super) type Fields = BTreeMap<&'static str, Shallow>;

/// What the reader kept of a schedule document.
#[derive(Debug, Default)]
pub(super) struct Doc {
    /// The header fields found.
    pub(super) fields: Fields,
    /// The decisions, or the first problem with them; `None` if there is no such key.
    pub(super) decisions: Option<Result<Vec<Decision>, ScheduleError>>,
}

/// Reads `text` as a schedule document. Errors: the JSON is invalid or cut off, an object
/// names a key twice, or the document is not an object.
pub(super) fn document(text: &str) -> Result<Doc, ScheduleError> {
    let mut r = Reader::new(text);
    let doc = match r.kind().map_err(syntax)? {
        Kind::Object => Some(read_document(&mut r)?),
        _ => {
            r.skip().map_err(syntax)?;
            None
        }
    };
    r.end().map_err(syntax)?;
    doc.ok_or(ScheduleError::NotASchedule { found: None })
}

fn syntax(e: crate::json::Error) -> ScheduleError {
    super::syntax_error(&e)
}

/// Reads the keys of the object that comes next; `known` ones are read shallowly into the
/// result and the others skipped, and `special` reads the value of a key it takes
/// (returning `false` for keys it does not take).
fn object(
    r: &mut Reader<'_>,
    known: &[&'static str],
    mut special: impl FnMut(&str, &mut Reader<'_>) -> Result<bool, ScheduleError>,
) -> Result<Fields, ScheduleError> {
    let mut seen = BTreeSet::new();
    let mut fields = Fields::new();
    r.begin().map_err(syntax)?;
    while let Some(key) = r.next_key(seen.is_empty()).map_err(syntax)? {
        let (line, column) = r.position();
        if seen.contains(&key) {
            return Err(ScheduleError::DuplicateKey {
                key: quote(&key),
                line,
                column,
            });
        }
        if seen.len() == MAX_KEYS {
            return Err(ScheduleError::TooManyKeys {
                line,
                column,
                limit: MAX_KEYS,
            });
        }
        r.colon().map_err(syntax)?;
        if !special(&key, r)? {
            match known.iter().find(|k| **k == key) {
                Some(name) => {
                    fields.insert(name, shallow(r)?);
                }
                None => r.skip().map_err(syntax)?,
            }
        }
        seen.insert(key);
    }
    Ok(fields)
}

/// The next value, as far as [`Shallow`] keeps it.
fn shallow(r: &mut Reader<'_>) -> Result<Shallow, ScheduleError> {
    Ok(match r.shallow().map_err(syntax)? {
        Shape::Array(n) => Shallow::Array(n),
        Shape::Object(n) => Shallow::Object(n),
        Shape::Scalar(Value::Null) => Shallow::Null,
        Shape::Scalar(Value::Bool(b)) => Shallow::Bool(b),
        Shape::Scalar(Value::Number(n)) => Shallow::Number(n),
        Shape::Scalar(Value::String(s)) => Shallow::String(s),
        Shape::Scalar(_) => Shallow::Null, // never: a scalar is none of the others
    })
}

fn read_document(r: &mut Reader<'_>) -> Result<Doc, ScheduleError> {
    let mut decisions = None;
    let fields = object(r, &HEADER_KEYS, |key, r| {
        if key != "decisions" {
            return Ok(false);
        }
        decisions = Some(match r.kind().map_err(syntax)? {
            Kind::Array => read_decisions(r)?,
            _ => Err(ScheduleError::field(
                "decisions",
                format!("should be an array, found {}", shallow(r)?),
            )),
        });
        Ok(true)
    })?;
    Ok(Doc { fields, decisions })
}

/// The array of decisions that comes next, converted one by one; after the first one that
/// cannot be, the others are skipped unread.
fn read_decisions(
    r: &mut Reader<'_>,
) -> Result<Result<Vec<Decision>, ScheduleError>, ScheduleError> {
    let mut decisions = Vec::new();
    r.begin().map_err(syntax)?;
    while r.next_element(decisions.is_empty()).map_err(syntax)? {
        let i = decisions.len();
        let problem = match r.kind().map_err(syntax)? {
            Kind::Object => match super::decision(i, &object(r, &DECISION_KEYS, |_, _| Ok(false))?)
            {
                Ok(decision) => {
                    decisions.push(decision);
                    continue;
                }
                Err(problem) => problem,
            },
            _ => ScheduleError::field(
                format!("decisions[{i}]"),
                format!("should be an object, found {}", shallow(r)?),
            ),
        };
        while r.next_element(false).map_err(syntax)? {
            r.skip().map_err(syntax)?;
        }
        return Ok(Err(problem));
    }
    Ok(Ok(decisions))
}
