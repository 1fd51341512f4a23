//! The protocol between `cargo interleave` and the test binaries it runs. Not public API:
//! the two sides are built from the same crate version, and this module is what they share.
//!
//! **In**, environment variables of the test process:
//! - `INTERLEAVE_REPLAY=<absolute path>`: the schedule file; the test it names judges it
//!   (see `test_support`), every other test explores as usual;
//! - `INTERLEAVE_PROTOCOL=<version>`: the version the tool reads; with it set, the test
//!   prints the lines below. A binary that speaks another version prints its lines with its
//!   own version, and the tool says the two differ.
//!
//! **Out**, on the test's stdout: one line per judged file, [`PREFIX`] then a JSON object:
//! `{"version": 1, "event": "verdict", "file": <path>, "test": <test path>, "verdict": <v>,
//! ...}` where `<v>` is `still-fails` (with `kind` and `message`, the failure's first line),
//! `fails-otherwise` (another failure, same fields), `fixed` (with `detail`: how much ran),
//! `diverged` (with `reason`) or `invalid` (with `reason`: the file cannot be read). Unknown
//! keys are for later versions and are ignored; a new kind of line gets a new `event`.
//!
//! The tool counts a test binary that ran no test, or printed no line for the file, as a
//! file not replayed, never as a success.

pub use interleave_engine::json;

use json::{Object, Value};

/// What starts every protocol line.
pub const PREFIX: &str = "interleave-test-protocol ";

/// The protocol version this crate speaks.
pub const VERSION: u64 = 1;

/// A protocol line: [`PREFIX`], then `fields` with `version` added, as one line of JSON.
pub(crate) fn line(mut fields: Object) -> String {
    fields.insert("version".into(), VERSION.into());
    format!("{PREFIX}{}", Value::Object(fields))
}

/// The JSON objects of the protocol lines in `stdout` (lines that do not parse are left
/// out: a test may print anything). Each is a [`json::Object`], the crate's own map of
/// [`json::Value`]s.
pub fn read(stdout: &str) -> Vec<Object> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(PREFIX))
        .filter_map(|text| match json::parse(text) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_with_its_version() {
        let mut fields = Object::new();
        fields.insert("event".into(), "verdict".into());
        fields.insert("message".into(), "two\nlines \"quoted\" \u{1}".into());
        let text = format!("noise\n{}\n{PREFIX}not json\n", line(fields));
        assert_eq!(text.lines().count(), 3, "a line is one line");
        let read = read(&text);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0]["version"].as_u64(), Some(1));
        assert_eq!(
            read[0]["message"].as_str(),
            Some("two\nlines \"quoted\" \u{1}")
        );
    }
}
