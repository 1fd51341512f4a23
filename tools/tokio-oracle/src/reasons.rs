//! `reasons.txt`: why a test does not pass on the model, one line each:
//!
//! ```text
//! file::test name | category | one-line reason
//! ```
//!
//! The test name may hold `*` (any text), so one line covers a test in every module of
//! `rt_common`. A pattern starting with `~` matches instead any test whose one-line
//! failure (what happened) contains the rest, for a cause many tests share. The category is `false alarm` (the model fails a correct program: a bug to
//! fix), `documented difference` (the reason starts with the README section it cites), or
//! `out of scope` (I/O, or a real OS thread or real time beside the model). The first
//! matching line wins; a failing test without one is `unclassified`.

use std::path::Path;

/// The categories a line may give.
pub(crate) const CATEGORIES: &[&str] = &["false alarm", "documented difference", "out of scope"];

/// One line of the file.
#[derive(Debug)]
pub(crate) struct Reason {
    /// `file::name`, with `*` for any text; or `~text`, found in the failure.
    pub(crate) pattern: String,
    /// One of [`CATEGORIES`].
    pub(crate) category: String,
    /// The explanation.
    pub(crate) reason: String,
}

/// Reads the reasons file; a malformed line is an error naming it.
pub(crate) fn load(path: &Path) -> Result<Vec<Reason>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reasons = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.splitn(3, '|').map(str::trim).collect();
        let [pattern, category, reason] = fields[..] else {
            return Err(format!(
                "{}:{}: expected `test | category | reason`",
                path.display(),
                number + 1
            ));
        };
        if !CATEGORIES.contains(&category) {
            return Err(format!(
                "{}:{}: category `{category}` is not one of {CATEGORIES:?}",
                path.display(),
                number + 1
            ));
        }
        reasons.push(Reason {
            pattern: pattern.to_string(),
            category: category.to_string(),
            reason: reason.to_string(),
        });
    }
    Ok(reasons)
}

/// The first reason whose pattern matches `file::name`, or the failure `what`.
pub(crate) fn find<'a>(
    reasons: &'a [Reason],
    file: &str,
    name: &str,
    what: &str,
) -> Option<&'a Reason> {
    let full = format!("{file}::{name}");
    reasons.iter().find(|r| match r.pattern.strip_prefix('~') {
        Some(text) => what.contains(text),
        None => glob_match(&r.pattern, &full),
    })
}

/// Whether `text` matches `pattern`, where `*` matches any text (possibly empty).
fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}
