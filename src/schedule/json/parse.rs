//! Reading a schedule document in one pass, as untrusted input.
//!
//! `serde_json::Value` would do, but it keeps the last of two equal keys silently, and it
//! holds every value of the document: a hostile file of `[0,0,0,...]` would take some 30 times
//! its size in memory. This reader instead
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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use super::value::Shallow;
use crate::schedule::error::quote;
use crate::schedule::{Decision, ScheduleError};

/// The keys of the document that are read, besides `decisions`.
const HEADER_KEYS: [&str; 17] = [
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
    let stop = RefCell::new(None);
    let node = Node {
        want: Want::Document,
        stop: &stop,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let read = node
        .deserialize(&mut de)
        .and_then(|read| de.end().map(|()| read));
    match read {
        Ok(Read::Document(doc)) => Ok(doc),
        Ok(_) => Err(ScheduleError::NotASchedule { found: None }),
        Err(e) => Err(match stop.into_inner() {
            Some(Stop::Duplicate(key)) => ScheduleError::DuplicateKey {
                key: quote(&key),
                line: e.line(),
                column: e.column(),
            },
            Some(Stop::TooManyKeys) => ScheduleError::TooManyKeys {
                line: e.line(),
                column: e.column(),
                limit: MAX_KEYS,
            },
            None => super::syntax_error(&e),
        }),
    }
}

/// What the value being read should be.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// A scalar field, or something skipped.
    Scalar,
    /// The document object.
    Document,
    /// The array of decisions.
    Decisions,
    /// The decision with this index.
    Decision(usize),
}

/// Why the reader stopped before the end of a well-formed text.
enum Stop {
    /// An object names this key twice.
    Duplicate(String),
    /// An object has more than [`MAX_KEYS`] keys.
    TooManyKeys,
}

/// What was read.
enum Read {
    /// Any value where no document, decisions array or decision was read.
    Value(Shallow),
    Document(Doc),
    Decisions(Result<Vec<Decision>, ScheduleError>),
    Decision(Result<Decision, ScheduleError>),
}

/// Reads one value as `want` says. `stop` receives the reason of a failure that is not a
/// JSON syntax error, just before the read fails.
#[derive(Clone, Copy)]
struct Node<'a> {
    want: Want,
    stop: &'a RefCell<Option<Stop>>,
}

impl Node<'_> {
    fn with(self, want: Want) -> Self {
        Node { want, ..self }
    }

    /// Reads the keys of one object; `known` ones are read shallowly into the result and
    /// the others skipped, and `special` reads the value of a key it takes (returning
    /// `None` for keys it does not take).
    fn object<'de, A: MapAccess<'de>>(
        self,
        mut map: A,
        known: &[&'static str],
        mut special: impl FnMut(&str, &mut A) -> Result<Option<()>, A::Error>,
    ) -> Result<Fields, A::Error> {
        let mut seen = BTreeSet::new();
        let mut fields = Fields::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                *self.stop.borrow_mut() = Some(Stop::Duplicate(key));
                return Err(de::Error::custom("a key appears twice"));
            }
            if seen.len() == MAX_KEYS {
                *self.stop.borrow_mut() = Some(Stop::TooManyKeys);
                return Err(de::Error::custom("too many keys"));
            }
            if special(&key, &mut map)?.is_none() {
                match known.iter().find(|k| **k == key) {
                    Some(name) => {
                        let value = map.next_value_seed(self.with(Want::Scalar))?;
                        fields.insert(name, value.into_shallow());
                    }
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            seen.insert(key);
        }
        Ok(fields)
    }

    fn document<'de, A: MapAccess<'de>>(self, map: A) -> Result<Read, A::Error> {
        let mut decisions = None;
        let fields = self.object(map, &HEADER_KEYS, |key, map| {
            if key != "decisions" {
                return Ok(None);
            }
            decisions = Some(match map.next_value_seed(self.with(Want::Decisions))? {
                Read::Decisions(read) => read,
                other => Err(ScheduleError::field(
                    "decisions",
                    format!("should be an array, found {}", other.into_shallow()),
                )),
            });
            Ok(Some(()))
        })?;
        Ok(Read::Document(Doc { fields, decisions }))
    }

    fn decisions<'de, A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let mut decisions = Vec::new();
        while let Some(read) = seq.next_element_seed(self.with(Want::Decision(decisions.len())))? {
            let problem = match read {
                Read::Decision(Ok(decision)) => {
                    decisions.push(decision);
                    continue;
                }
                Read::Decision(Err(problem)) => problem,
                other => ScheduleError::field(
                    format!("decisions[{}]", decisions.len()),
                    format!("should be an object, found {}", other.into_shallow()),
                ),
            };
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Read::Decisions(Err(problem)));
        }
        Ok(Read::Decisions(Ok(decisions)))
    }
}

impl Read {
    /// The value as a field's value. Only [`Read::Value`] occurs where this is called: the
    /// other kinds are read only where they are wanted, and never handed on.
    fn into_shallow(self) -> Shallow {
        match self {
            Read::Value(value) => value,
            Read::Document(_) | Read::Decision(_) => Shallow::Object(0),
            Read::Decisions(_) => Shallow::Array(0),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Read;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Read, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Read, E> {
        Ok(Read::Value(Shallow::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Read, E> {
        Ok(Read::Value(Shallow::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Read, E> {
        Ok(Read::Value(Shallow::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Read, E> {
        // JSON has no NaN or infinity, so `from_f64` always succeeds on parsed text.
        Ok(Read::Value(
            Number::from_f64(v).map_or(Shallow::Null, Shallow::Number),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Read, E> {
        Ok(Read::Value(Shallow::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Read, E> {
        Ok(Read::Value(Shallow::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Read, E> {
        Ok(Read::Value(Shallow::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        if let Want::Decisions = self.want {
            return self.decisions(seq);
        }
        let mut len = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            len += 1;
        }
        Ok(Read::Value(Shallow::Array(len)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        match self.want {
            Want::Document => self.document(map),
            Want::Decision(index) => {
                let fields = self.object(map, &DECISION_KEYS, |_, _| Ok(None))?;
                Ok(Read::Decision(super::decision(index, &fields)))
            }
            Want::Scalar | Want::Decisions => {
                let mut len = 0;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    len += 1;
                }
                Ok(Read::Value(Shallow::Object(len)))
            }
        }
    }
}
