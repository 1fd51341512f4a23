//! What a stored schedule records besides its decisions: the [`Signature`] of the failure it
//! led to, by which a later run judges whether that failure still happens, and the [`Build`]
//! of the test binary that ran it, so that a replay builds the test the same way.

use super::FailureKind;

/// What failed, without where: the failure's kind, the failing thread's name and what went
/// wrong (the panic message, or what the crate reports for a deadlock, data race, ...), with
/// source locations and object numbers taken out. A fix that only moves lines, or an unrelated
/// edit that adds a lock somewhere, leaves it unchanged; a fix of the failure makes it occur
/// no more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub(crate) kind: FailureKind,
    pub(crate) thread: Option<String>,
    pub(crate) thread_id: Option<usize>,
    pub(crate) what: String,
}

/// The longest `what` a signature keeps, in characters: a panic message can be long (a
/// `Debug` dump), and the beginning tells failures apart.
const MAX_WHAT: usize = 500;

impl Signature {
    /// The signature of a failure of kind `kind` in thread `thread` (id and name), whose
    /// report says `message`.
    pub(crate) fn new(
        kind: FailureKind,
        thread: Option<(usize, Option<&str>)>,
        message: &str,
    ) -> Self {
        Signature {
            kind,
            thread: thread.and_then(|(_, name)| name.map(str::to_owned)),
            thread_id: thread.map(|(id, _)| id),
            what: without_places(message).chars().take(MAX_WHAT).collect(),
        }
    }

    /// The failure's kind (a schedule file writes its name: `panic`, `data race`, ...).
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The name of the thread that failed, if it had one.
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    /// The id of the thread that failed in the recorded execution, if one did: not part of
    /// the comparison (ids move when a fix spawns a thread), it tells which decisions were the
    /// failing thread's.
    pub fn thread_id(&self) -> Option<usize> {
        self.thread_id
    }

    /// What went wrong, without source locations (`file.rs:12:5`) and object numbers (`#3`).
    pub fn what(&self) -> &str {
        &self.what
    }

    /// Whether `other` is the same failure: same kind, same thread name, same `what`.
    pub fn matches(&self, other: &Signature) -> bool {
        self.kind == other.kind && self.thread == other.thread && self.what == other.what
    }
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first = self.what.lines().next().unwrap_or("");
        match &self.thread {
            Some(name) => write!(f, "{} in thread '{name}': {first}", self.kind),
            None => write!(f, "{}: {first}", self.kind),
        }
    }
}

/// `message` with every source location (`src/lib.rs:12:5`, `at lib.rs:3`) replaced by
/// `<at>` and every object number (`#3`) by `#_`: what stays is the same after a fix
/// that moves lines or creates another object first.
fn without_places(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).map_or(rest.len(), |i| {
            i + rest[i..].chars().next().map_or(1, char::len_utf8)
        });
        let (word, after) = rest.split_at(end);
        out.push_str(&word_without_places(word));
        rest = after;
    }
    out
}

/// One whitespace-ended word of a message, its place (if it holds one) replaced.
fn word_without_places(word: &str) -> String {
    if let Some(at) = word.find(".rs:") {
        let digits = word[at + 4..]
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .map_or(word.len(), |i| at + 4 + i);
        if digits > at + 4 {
            let start = word[..at].rfind(['(', '`', '\'', '"']).map_or(0, |i| i + 1);
            return format!("{}<at>{}", &word[..start], &word[digits..]);
        }
    }
    if let Some(hash) = word.find('#') {
        let digits = word[hash + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(word.len(), |i| hash + 1 + i);
        if digits > hash + 1 && (hash == 0 || !word.as_bytes()[hash - 1].is_ascii_alphanumeric()) {
            return format!("{}#_{}", &word[..hash], &word[digits..]);
        }
    }
    word.to_owned()
}

/// How the test binary that recorded a schedule was built, as far as it can know about
/// itself: whether `--cfg interleave` was set (the README's switch) and whether it was an
/// optimized build (`debug_assertions` off). `None` where not recorded. Features cannot be
/// known at run time and are never recorded; `cargo interleave replay` reads only these two
/// values from a file, never flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Build {
    pub(crate) cfg_interleave: Option<bool>,
    pub(crate) release: Option<bool>,
}

/// The build of a binary that has `cfg_interleave` and `release` as given.
pub fn build(cfg_interleave: bool, release: bool) -> Build {
    Build::new(cfg_interleave, release)
}

impl Build {
    /// The build of a binary that has `cfg_interleave` and `release` as given.
    pub(crate) fn new(cfg_interleave: bool, release: bool) -> Self {
        Build {
            cfg_interleave: Some(cfg_interleave),
            release: Some(release),
        }
    }

    /// Whether the test binary was built with `--cfg interleave`, if recorded.
    pub fn cfg_interleave(&self) -> Option<bool> {
        self.cfg_interleave
    }

    /// Whether the test binary was an optimized build (`--release`), if recorded.
    pub fn release(&self) -> Option<bool> {
        self.release
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_taken_out_of_messages() {
        let m = "data race on UnsafeCell #3 (first used at src/lib.rs:12:5): thread 'a' wrote \
                 it at tests/x.rs:40:9, and #12, at `lib.rs:7`";
        assert_eq!(
            without_places(m),
            "data race on UnsafeCell #_ (first used at <at>): thread 'a' wrote it at <at>, and \
             #_, at `<at>`"
        );
        assert_eq!(without_places("left: 1\n right: 2"), "left: 1\n right: 2");
        assert_eq!(
            without_places("issue#12 x.rs y.rs:z"),
            "issue#12 x.rs y.rs:z"
        );
    }

    #[test]
    fn signatures_match_on_kind_thread_and_what_not_on_ids() {
        let a = Signature::new(
            FailureKind::Panic,
            Some((2, Some("reader"))),
            "boom at src/a.rs:1:1",
        );
        let moved = Signature::new(
            FailureKind::Panic,
            Some((3, Some("reader"))),
            "boom at src/a.rs:9:1",
        );
        assert!(a.matches(&moved));
        let other_thread = Signature::new(FailureKind::Panic, Some((2, Some("writer"))), "boom");
        assert!(!a.matches(&other_thread));
        let other_kind = Signature::new(
            FailureKind::Deadlock,
            Some((2, Some("reader"))),
            "boom at <at>",
        );
        assert!(!a.matches(&other_kind));
        assert_eq!(a.to_string(), "panic in thread 'reader': boom at <at>");
    }
}
