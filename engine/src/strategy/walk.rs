//! What both depth-first searches (`dfs.rs`, and `dpor/` with reduction) keep besides their
//! tree of decisions: where the current execution is on the path, whether the search is
//! over, the estimators of its size (`estimate.rs`), and the checks that a replayed prefix
//! meets what it met before (nondeterminism).

use super::estimate::{Search, Sizer};
use super::{Choice, Estimate, Nondeterminism, Pick, Refusal, describe};
use crate::op::PickKind;
use crate::op::{Op, Tid};

/// The progress of a depth-first search through its executions.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// How many points of the path the current execution replays before making fresh ones.
    pub(super) replay: usize,
    /// Index of the next decision in the current execution.
    pub(super) depth: usize,
    /// Preemptions so far in the current execution.
    pub(super) preemptions: u32,
    started: bool,
    exhausted: bool,
    sizer: Sizer,
}

impl Walk {
    /// Whether the search is over.
    pub(super) fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Whether the execution about to begin is the first (later ones must first move the
    /// path to its next branch); from now on, one has begun.
    pub(super) fn first(&mut self) -> bool {
        !std::mem::replace(&mut self.started, true)
    }

    /// Begins an execution on a path of `len` points if the search goes on (`go_on`);
    /// otherwise the search is over. Returns `go_on`.
    pub(super) fn begin(&mut self, go_on: bool, len: usize) -> bool {
        if !go_on {
            self.exhausted = true;
            return false;
        }
        self.replay = len;
        self.depth = 0;
        self.preemptions = 0;
        true
    }

    /// Ends an execution whose path had the given `shape`: for each point, how many of its
    /// branches were taken before this one, and how many it has (as far as the search knows
    /// now). An execution that ended before replaying the whole prefix (decision `depth`,
    /// which saw what `seen_at(depth)` says) is not deterministic.
    pub(super) fn end<'a>(
        &mut self,
        shape: impl Iterator<Item = (usize, usize)>,
        seen_at: impl FnOnce(usize) -> Seen<'a>,
    ) -> Result<(), Refusal> {
        self.sizer.end(shape);
        if self.depth >= self.replay {
            return Ok(());
        }
        Err(ended_before(self.depth, seen_at(self.depth)))
    }

    /// The estimates of the number of executions of a `search`, once one has ended.
    pub(super) fn estimate(&self, search: Search) -> Option<Estimate> {
        self.sizer.estimate(search)
    }
}

/// What a depth-first search saw at a decision, to check that a later execution that makes
/// the same decisions sees the same there.
pub(super) struct Seen<'a> {
    pub(super) runnable: &'a [Tid],
    pub(super) ops: &'a [Op],
    pub(super) current: Option<Tid>,
    /// For a decision other than a thread's: its kind and options.
    pub(super) pick: Option<(PickKind, usize)>,
}

impl Seen<'_> {
    fn describe(&self) -> String {
        match self.pick {
            Some((kind, n)) => describe_pick(kind, n),
            None => describe(self.runnable, self.ops),
        }
    }
}

fn describe_pick(kind: PickKind, options: usize) -> String {
    format!("a decision \"{}\" among {options} options", kind.name())
}

/// Whether pick `decision`, replayed, offers what it offered when it was `seen`.
pub(super) fn check_replayed_pick(
    decision: usize,
    seen: Seen<'_>,
    pick: &Pick,
) -> Result<(), Refusal> {
    if seen.pick == Some((pick.kind, pick.options)) {
        return Ok(());
    }
    Err(Refusal::Nondeterminism(Box::new(Nondeterminism {
        decision,
        before: seen.describe(),
        now: describe_pick(pick.kind, pick.options),
    })))
}

/// Whether decision `decision`, replayed, offers what it offered when it was `seen` (the same
/// runnable threads, next operations and current thread); if not, the model is not
/// deterministic.
pub(super) fn check_replayed(
    decision: usize,
    seen: Seen<'_>,
    choice: &Choice<'_>,
) -> Result<(), Refusal> {
    let same_ops = seen
        .ops
        .iter()
        .zip(choice.ops)
        .all(|(a, b)| a.kind == b.kind && a.loc == b.loc);
    if seen.pick.is_none()
        && seen.runnable == choice.runnable
        && seen.current == choice.current
        && same_ops
    {
        return Ok(());
    }
    Err(Refusal::Nondeterminism(Box::new(Nondeterminism {
        decision,
        before: seen.describe(),
        now: describe(choice.runnable, choice.ops),
    })))
}

/// The execution ended before decision `decision`, which an earlier execution with the same
/// decisions made after it `seen` this: the model is not deterministic.
fn ended_before(decision: usize, seen: Seen<'_>) -> Refusal {
    Refusal::Nondeterminism(Box::new(Nondeterminism {
        decision,
        before: seen.describe(),
        now: "the execution ended".to_owned(),
    }))
}
