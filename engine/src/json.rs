//! JSON, read and written by the crate itself: the protocol lines, the schedule file (whose
//! strict reader, `schedule/json/parse.rs`, walks the text with [`Reader`]) and cargo's
//! messages in `cargo interleave`. Not public API.
//!
//! Why not `serde_json`: it implements `PartialEq<Value>` for `u32`, `str` and the other
//! primitives, and such impls reach every crate that links it, so a user's
//! `assert_eq!(v, vec![])` on a `Vec<u32>` no longer infers its type. [`Value`] compares
//! only with itself.
//!
//! Reading follows RFC 8259: no trailing commas, no comments, strings of valid escapes and
//! no raw control characters, at most [`MAX_DEPTH`] nested arrays and objects. An error
//! says where, as a line and a column counted in characters from 1, the column being that
//! of the character that shows the problem (at the end of the text, the last one).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

/// The deepest nesting of arrays and objects a reader accepts (a hostile text of a million
/// `[` would otherwise cost a million frames or a stack of that size).
pub(crate) const MAX_DEPTH: usize = 128;

/// A JSON object: its keys in order (of a key given twice, the last value).
pub type Object = BTreeMap<String, Value>;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object.
    Object(Object),
}

/// A JSON number, kept as its text (valid JSON), so that no precision is lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number(String);

impl Number {
    /// The number as a `u64`, if it is a non-negative integer that fits (written without a
    /// fraction or an exponent).
    pub(crate) fn as_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The number as an `f64` (the nearest one).
    pub fn as_f64(&self) -> f64 {
        self.0.parse().unwrap_or(f64::NAN)
    }

    /// The number's text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Value {
    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a `u64`, if it is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The boolean, if the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The object, if the value is one.
    pub(crate) fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value of `key`, if the value is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.get(key)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Number(Number(n.to_string()))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Value {
        Value::Object(o)
    }
}

/// Compact JSON, as `serde_json::to_string` writes it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(&n.0),
            Value::String(s) => write_string(f, s),
            Value::Array(a) => {
                f.write_char('[')?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_char(']')
            }
            Value::Object(o) => {
                f.write_char('{')?;
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write_string(f, k)?;
                    write!(f, ":{v}")?;
                }
                f.write_char('}')
            }
        }
    }
}

/// `s` as a JSON string: `"` and `\` escaped, control characters as `\n`-style escapes
/// where JSON has one and `\u00XX` otherwise, everything else as it is.
pub(crate) fn write_string(out: &mut impl fmt::Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\u{8}' => out.write_str("\\b")?,
            '\u{c}' => out.write_str("\\f")?,
            c if c < ' ' => write!(out, "\\u{:04x}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

/// Why a text is not JSON, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    line: usize,
    column: usize,
    reason: &'static str,
    eof: bool,
}

impl Error {
    /// The line of the problem, from 1.
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The column of the character that shows the problem, from 1 (0 at the start of a line).
    pub(crate) fn column(&self) -> usize {
        self.column
    }

    /// What is wrong: "expected value", "trailing comma", ...
    pub(crate) fn reason(&self) -> &'static str {
        self.reason
    }

    /// Whether the text ends before the value does.
    pub(crate) fn is_eof(&self) -> bool {
        self.eof
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.reason, self.line, self.column
        )
    }
}

impl std::error::Error for Error {}

/// Reads `text` as one JSON value (surrounded by whitespace only).
pub fn parse(text: &str) -> Result<Value, Error> {
    let mut reader = Reader::new(text);
    let value = reader.value(0)?;
    reader.end()?;
    Ok(value)
}

mod reader;

pub(crate) use reader::{Kind, Reader, Shape};

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts that serde_json (a dev-dependency, as the reference) accepts or refuses; this
    /// reader must agree, and on the ones it accepts, write what serde_json writes.
    const TEXTS: &[&str] = &[
        r#"{"a": [1, -2.5, true, null, {"b": "c\u00e9\n\ud83d\ude00\"\\\/"}], "z": {}}"#,
        "[]",
        " 0 ",
        "\"\\u0001\\t\"",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "{1: 2}",
        "01",
        "1.",
        "-",
        "[1 2]",
        "\"a\nb\"",
        "\"\\x\"",
        "\"\\ud800\"",
        "tru",
        "nul",
        "[1] x",
        "{\"a\":1}{",
    ];

    #[test]
    fn it_reads_and_writes_as_serde_json_does() {
        for text in TEXTS {
            let ours = parse(text);
            let theirs = serde_json::from_str::<serde_json::Value>(text);
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{text}: {ours:?} / {theirs:?}"
            );
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => {
                    assert_eq!(ours.to_string(), theirs.to_string(), "{text}")
                }
                (Err(ours), Err(theirs)) => {
                    assert_eq!(ours.is_eof(), theirs.is_eof(), "{text}: {ours} / {theirs}");
                    assert_eq!(
                        (ours.line(), ours.column()),
                        (theirs.line(), theirs.column()),
                        "{text}: {ours} / {theirs}"
                    );
                }
                _ => unreachable!(),
            }
        }
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_refused_without_recursion() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        let e = parse(&deep).unwrap_err();
        assert_eq!(
            (e.reason(), e.column()),
            ("recursion limit exceeded", MAX_DEPTH + 1)
        );
        let mut r = Reader::new(&deep);
        assert_eq!(r.skip().unwrap_err().reason(), "recursion limit exceeded");
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
        assert!(Reader::new(&fine).skip().is_ok());
    }

    #[test]
    fn a_number_is_kept_as_written() {
        let v = parse("[18446744073709551615, 18446744073709551616, 1.0, -0]").unwrap();
        let Value::Array(a) = v else { panic!() };
        let u64s: Vec<Option<u64>> = a.iter().map(Value::as_u64).collect();
        assert_eq!(u64s, [Some(u64::MAX), None, None, None]);
        assert_eq!(a[2].to_string(), "1.0");
    }
}
