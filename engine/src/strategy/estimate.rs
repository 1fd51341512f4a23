//! How large a depth-first search looks from the executions it has run, for the progress
//! line. Both estimators read the *shape* of the paths: at each point of the path just run,
//! how many of its branches were searched before the one taken, and how many it has as far
//! as the search knows (a DPOR search learns of more branches as it goes).
//!
//! - Knuth's ("Estimating the efficiency of backtrack programs", 1975): the mean over the
//!   paths of the product of their branching. Unbiased for paths drawn at random, which a
//!   DFS's are not.
//! - The weighted backtrack estimator of Kilby, Slaney, Thiébaux and Walsh ("Estimating
//!   search tree size", AAAI 2006): the executions run divided by the share of the tree
//!   they cover, a branch of a point with `b` branches weighing `1/b` of the point. It is
//!   exact at the end of a search whose branching was known from the start, and is the one
//!   shown.
//!
//! Neither is reliable, and how far off they are is measured, not argued:
//! `config/progress_accuracy.rs` runs full searches of the crate's models and compares
//! every estimate shown (from the thousandth execution on) with the true total. What it
//! found sets [`Estimate::range`], as multiples of the weighted estimate:
//! - Without reduction or bound, the branching is known from the start and the estimate
//!   ran high: the truth was 0.39 to 1.0 times it; the range is 0.3 to 1.5 times.
//! - With DPOR, branches are learnt late, so the estimate runs low: 0.5 to 9.6 times; the
//!   range is 0.4 to 12 times.
//! - Under a preemption bound the tree is lopsided (the first branch of a point keeps the
//!   whole budget, the others less), and the estimate ran high, by up to three orders of
//!   magnitude, never low: the range is "at most 1.5 times".
//!
//! Every range's lower end is at least the executions already run.

/// The estimates after some executions of a depth-first search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Executions ended so far.
    pub executions: u64,
    /// Knuth's estimate of all executions.
    pub knuth: f64,
    /// The share of the search tree covered, in (0, 1].
    pub explored: f64,
    /// What kind of search it is.
    pub search: Search,
}

/// The kinds of depth-first search, whose estimates err differently (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Every schedule, without reduction.
    Plain,
    /// With DPOR, without a bound.
    Reduced,
    /// Under a preemption bound, with or without reduction.
    Bounded,
}

impl Estimate {
    /// The weighted backtrack estimate of all executions.
    pub fn weighted(&self) -> f64 {
        self.executions as f64 / self.explored.max(f64::MIN_POSITIVE)
    }

    /// Where the true total lies, as far as the measurements in the module notes say: at
    /// least the executions run, and within the factors measured.
    pub fn range(&self) -> (f64, f64) {
        let (low, high) = match self.search {
            Search::Plain => (0.3, 1.5),
            Search::Reduced => (0.4, 12.0),
            Search::Bounded => (0.0, 1.5),
        };
        let (w, n) = (self.weighted(), self.executions as f64);
        ((w * low).max(n), (w * high).max(n))
    }
}

/// The running estimators of one search.
#[derive(Debug, Default)]
pub(super) struct Sizer {
    ended: u64,
    knuth: f64,
    explored: f64,
}

impl Sizer {
    /// Counts an execution whose path had `shape`: (branches searched before the one
    /// taken, all branches) at each point.
    pub(super) fn end(&mut self, shape: impl Iterator<Item = (usize, usize)>) {
        self.ended += 1;
        let n = self.ended;
        let (mut leaves, mut weight, mut left) = (1.0_f64, 1.0_f64, 0.0_f64);
        for (before, branches) in shape {
            let b = branches.max(1) as f64;
            left += weight * before.min(branches) as f64 / b;
            weight /= b;
            leaves *= b;
        }
        self.knuth += (leaves - self.knuth) / n as f64;
        self.explored = (left + weight).min(1.0);
    }

    /// The estimates so far of a `search`, once an execution has ended.
    pub(super) fn estimate(&self, search: Search) -> Option<Estimate> {
        (self.ended > 0).then_some(Estimate {
            executions: self.ended,
            knuth: self.knuth,
            explored: self.explored,
            search,
        })
    }
}
