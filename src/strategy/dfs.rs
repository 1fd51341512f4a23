//! Depth-first enumeration of schedules, each exactly once, with an optional preemption bound.
//!
//! Stateless model checking as in VeriSoft (Godefroid, POPL 1997): the model is re-run from
//! the start for every schedule, replaying a prefix of decisions and then taking the first
//! untried choice. The bound follows CHESS (Musuvathi and Qadeer, PLDI 2007, "Iterative
//! context bounding"): a *preemption* is choosing another thread while the one that reached
//! the switch point could have continued; switching because it blocked or finished is free.
//!
//! Soundness under the bound: every point of the current path tries each of its alternatives
//! whose total preemption count stays within the bound, and a fresh point first takes the
//! alternative that costs nothing. So every schedule with at most `bound` preemptions is run,
//! exactly once (paths are the leaves of one tree, visited in order).

use super::{Choice, Refusal, Seen, Strategy};
use crate::op::{Op, Tid};

/// One decision on the current path.
#[derive(Clone, Debug)]
struct Point {
    /// Alternatives in the order they are tried: the current thread first (no preemption),
    /// then the others ascending.
    order: Vec<Tid>,
    /// What each runnable thread was about to do, in ascending thread order (to check that a
    /// replayed prefix meets the same situation).
    ops: Vec<Op>,
    runnable: Vec<Tid>,
    current: Option<Tid>,
    /// Index into `order` of the alternative taken on the current path.
    taken: usize,
    /// Preemptions on the path before this point.
    preemptions_before: u32,
}

impl Point {
    /// What the search saw here.
    fn seen(&self) -> Seen<'_> {
        Seen {
            runnable: &self.runnable,
            ops: &self.ops,
            current: self.current,
        }
    }

    /// Preemptions of the path up to and including alternative `i` of this point.
    fn cost(&self, i: usize) -> u32 {
        let preempts = self.current.is_some_and(|c| self.order[i] != c);
        self.preemptions_before + u32::from(preempts)
    }
}

/// Exhaustive (or preemption-bounded) depth-first search.
#[derive(Debug)]
pub(crate) struct DfsStrategy {
    bound: Option<u32>,
    /// The decisions of the current execution; `path[..replay]` are replayed.
    path: Vec<Point>,
    /// How many points of `path` the current execution replays before making fresh ones.
    replay: usize,
    /// Index of the next decision in the current execution.
    depth: usize,
    /// Preemptions so far in the current execution.
    preemptions: u32,
    started: bool,
    exhausted: bool,
    /// Running mean of Knuth's estimate of the number of executions.
    estimate: f64,
    estimates: u64,
}

impl DfsStrategy {
    /// A search of every schedule with at most `bound` preemptions (`None`: every schedule).
    pub(crate) fn new(bound: Option<u32>) -> Self {
        DfsStrategy {
            bound,
            path: Vec::new(),
            replay: 0,
            depth: 0,
            preemptions: 0,
            started: false,
            exhausted: false,
            estimate: 0.0,
            estimates: 0,
        }
    }

    /// Knuth's estimate from the current path: the product of the alternatives within the
    /// bound at each of its points.
    fn record_estimate(&mut self) {
        let leaves: f64 = self
            .path
            .iter()
            .map(|p| {
                let n = (0..p.order.len())
                    .filter(|&i| self.within_bound(p.cost(i)))
                    .count();
                n.max(1) as f64
            })
            .product();
        self.estimates += 1;
        self.estimate += (leaves - self.estimate) / self.estimates as f64;
    }

    fn within_bound(&self, cost: u32) -> bool {
        self.bound.is_none_or(|b| cost <= b)
    }

    /// Moves the deepest point that has an untried alternative within the bound to that
    /// alternative and drops the points after it. `false`: nothing is left.
    fn backtrack(&mut self) -> bool {
        while let Some(point) = self.path.last() {
            let next =
                (point.taken + 1..point.order.len()).find(|&i| self.within_bound(point.cost(i)));
            if let Some(i) = next {
                self.path.last_mut().expect("checked above").taken = i;
                return true;
            }
            self.path.pop();
        }
        false
    }

    fn fresh_point(&self, choice: &Choice<'_>) -> Point {
        let mut order = Vec::with_capacity(choice.runnable.len());
        order.extend(choice.current);
        order.extend(
            choice
                .runnable
                .iter()
                .filter(|&&t| Some(t) != choice.current),
        );
        Point {
            order,
            ops: choice.ops.to_vec(),
            runnable: choice.runnable.to_vec(),
            current: choice.current,
            taken: 0,
            preemptions_before: self.preemptions,
        }
    }

    fn check_replayed(&self, point: &Point, choice: &Choice<'_>) -> Result<(), Refusal> {
        super::check_replayed(self.depth, point.seen(), choice)
    }
}

impl Strategy for DfsStrategy {
    fn name(&self) -> &'static str {
        "dfs"
    }

    fn begin_execution(&mut self) -> bool {
        if self.exhausted {
            return false;
        }
        if std::mem::replace(&mut self.started, true) && !self.backtrack() {
            self.exhausted = true;
            return false;
        }
        self.replay = self.path.len();
        self.depth = 0;
        self.preemptions = 0;
        true
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        if self.depth < self.replay {
            self.check_replayed(&self.path[self.depth], choice)?;
        } else {
            let point = self.fresh_point(choice);
            self.path.push(point);
        }
        let point = &self.path[self.depth];
        let chosen = point.order[point.taken];
        self.preemptions = point.cost(point.taken);
        self.depth += 1;
        Ok(chosen)
    }

    fn end_execution(&mut self) -> Result<(), Refusal> {
        self.record_estimate();
        if self.depth >= self.replay {
            return Ok(());
        }
        Err(super::ended_before(
            self.depth,
            self.path[self.depth].seen(),
        ))
    }

    fn exhausted(&self) -> bool {
        self.exhausted
    }

    fn estimate(&self) -> Option<f64> {
        (self.estimates > 0).then_some(self.estimate)
    }

    fn depth(&self) -> usize {
        self.path.len()
    }
}
