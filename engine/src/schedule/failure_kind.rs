//! The kinds of failure: what a report says went wrong and what a stored schedule's
//! signature records (so they live with the schedule format, below the reports).

use std::fmt;

/// What went wrong in a failing execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// A model thread panicked (an assertion failed, an `unwrap` on `Err`, ...).
    Panic,
    /// Every live thread was blocked and no timeout could fire.
    Deadlock,
    /// The execution reached `max_steps` switch points without finishing (one at which a
    /// thread alone could run counts a tenth).
    Livelock,
    /// A replayed schedule did not fit the model (another model, or the model changed).
    Divergence,
    /// The same decisions led to different situations in two executions: the model depends
    /// on something besides the schedule (a `HashMap`'s order, real time, randomness).
    Nondeterminism,
    /// The model used the crate in a way it does not support (a primitive shared between
    /// executions, ...).
    Misuse,
    /// A model thread ran past the end of its stack.
    StackOverflow,
    /// Two accesses to one `cell::UnsafeCell`, at least one a write, that nothing orders
    /// (no lock, join, channel, or acquire of a release between them). The failure's
    /// `threads` holds both accesses, the earlier first; its thread and location are the
    /// later one's.
    DataRace,
    /// An execution that otherwise passed left a modelled `sync::Arc` alive (a cycle, a
    /// `mem::forget`, a clone kept in a static): the failure names where each was created.
    Leak,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Panic => "panic",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::Divergence => "divergence",
            FailureKind::Nondeterminism => "nondeterminism",
            FailureKind::Misuse => "misuse",
            FailureKind::StackOverflow => "stack overflow",
            FailureKind::DataRace => "data race",
            FailureKind::Leak => "leak",
        })
    }
}

impl FailureKind {
    /// Every kind, for reading schedule files.
    pub(crate) const ALL: [FailureKind; 9] = [
        FailureKind::Panic,
        FailureKind::Deadlock,
        FailureKind::Livelock,
        FailureKind::Divergence,
        FailureKind::Nondeterminism,
        FailureKind::Misuse,
        FailureKind::StackOverflow,
        FailureKind::DataRace,
        FailureKind::Leak,
    ];

    /// The kind whose name (as `Display` writes it) is `name`.
    pub(crate) fn from_name(name: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|k| k.to_string() == name)
    }
}
