//! [`Shallow`]: a JSON value as far as the reader keeps it.

use std::fmt;

use crate::json::Number;

use crate::schedule::error::quote;

/// A JSON value as the reader keeps it: a scalar whole, an array or an object only counted,
/// its contents skipped unread. No schedule field read through this type may be an array or
/// an object, so keeping their contents would only cost memory (a hostile file could make
/// that many times its size).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Shallow {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    /// An array and its number of values.
    Array(u64),
    /// An object and its number of keys.
    Object(u64),
}

impl Shallow {
    /// The value as a `u64`, if it is a non-negative integer that fits.
    pub(super) fn as_u64(&self) -> Option<u64> {
        match self {
            Shallow::Number(n) => n.as_u64(),
            _ => None,
        }
    }
}

/// The value for an error message: a scalar as in JSON (a long string shortened, see
/// [`quote`]), an array or object described.
impl fmt::Display for Shallow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shallow::Null => f.write_str("null"),
            Shallow::Bool(b) => write!(f, "{b}"),
            Shallow::Number(n) if n.as_str().len() > 64 => {
                write!(f, "{}… ({} digits)", &n.as_str()[..64], n.as_str().len())
            }
            Shallow::Number(n) => write!(f, "{n}"),
            Shallow::String(s) => f.write_str(&quote(s)),
            Shallow::Array(1) => f.write_str("an array of 1 value"),
            Shallow::Array(n) => write!(f, "an array of {n} values"),
            Shallow::Object(1) => f.write_str("an object of 1 key"),
            Shallow::Object(n) => write!(f, "an object of {n} keys"),
        }
    }
}
