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

use super::estimate::Search;
use super::walk::{Seen, Walk, check_replayed, check_replayed_pick};
use super::{Choice, DporStrategy, Estimate, Exhaustive, Pick, Refusal, Setup, Strategy};
use crate::op::PickKind;
use crate::op::{Op, Tid};
use crate::settings::{Reduction, StrategyKind};

/// DFS's maker (its row in `listing.rs`): the search of a run, with partial-order reduction (`dpor/`) or
/// without (this file), within the preemption bound if there is one.
pub(super) fn make(setup: &Setup) -> Box<dyn Strategy> {
    let StrategyKind::Dfs { max_preemptions } = setup.kind else {
        unreachable!("DFS's maker is asked for {:?}", setup.kind)
    };
    match setup.reduction {
        Reduction::Dpor => Box::new(DporStrategy::new(max_preemptions)),
        Reduction::Off => Box::new(DfsStrategy::new(max_preemptions)),
    }
}

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
    /// For a decision other than a thread's, its kind: `order` is then its options.
    pick: Option<PickKind>,
}

impl Point {
    /// What the search saw here.
    fn seen(&self) -> Seen<'_> {
        Seen {
            runnable: &self.runnable,
            ops: &self.ops,
            current: self.current,
            pick: self.pick.map(|k| (k, self.order.len())),
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
pub struct DfsStrategy {
    bound: Option<u32>,
    /// The decisions of the current execution; `path[..walk.replay]` are replayed.
    path: Vec<Point>,
    walk: Walk,
}

impl DfsStrategy {
    /// A search of every schedule with at most `bound` preemptions (`None`: every schedule).
    pub fn new(bound: Option<u32>) -> Self {
        DfsStrategy {
            bound,
            path: Vec::new(),
            walk: Walk::default(),
        }
    }

    fn within_bound(&self, cost: u32) -> bool {
        within(self.bound, cost)
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
            preemptions_before: self.walk.preemptions,
            pick: None,
        }
    }

    /// A point for `pick`: every option costs nothing.
    fn pick_point(&self, pick: &Pick) -> Point {
        Point {
            order: pick.kind.search_order(pick.options),
            ops: Vec::new(),
            runnable: Vec::new(),
            current: None,
            taken: 0,
            preemptions_before: self.walk.preemptions,
            pick: Some(pick.kind),
        }
    }
}

impl Strategy for DfsStrategy {
    fn begin_execution(&mut self) -> bool {
        let go_on = !self.walk.exhausted() && (self.walk.first() || self.backtrack());
        if !self.walk.begin(go_on, self.path.len()) {
            return false;
        }
        true
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        if self.walk.depth < self.walk.replay {
            check_replayed(self.walk.depth, self.path[self.walk.depth].seen(), choice)?;
        } else {
            let point = self.fresh_point(choice);
            self.path.push(point);
        }
        let point = &self.path[self.walk.depth];
        let chosen = point.order[point.taken];
        self.walk.preemptions = point.cost(point.taken);
        self.walk.depth += 1;
        Ok(chosen)
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        if self.walk.depth < self.walk.replay {
            check_replayed_pick(self.walk.depth, self.path[self.walk.depth].seen(), pick)?;
        } else {
            let point = self.pick_point(pick);
            self.path.push(point);
        }
        let point = &self.path[self.walk.depth];
        self.walk.depth += 1;
        Ok(point.order[point.taken])
    }

    fn end_execution(&mut self) -> Result<(), Refusal> {
        let (path, bound) = (&self.path, self.bound);
        self.walk.end(shape(path, bound), |d| path[d].seen())
    }

    fn exhaustive(&mut self) -> Option<&mut dyn Exhaustive> {
        Some(self)
    }
}

impl Exhaustive for DfsStrategy {
    fn estimate(&self) -> Option<Estimate> {
        let search = match self.bound {
            Some(_) => Search::Bounded,
            None => Search::Plain,
        };
        self.walk.estimate(search)
    }

    fn depth(&self) -> usize {
        self.path.len()
    }
}

fn within(bound: Option<u32>, cost: u32) -> bool {
    bound.is_none_or(|b| cost <= b)
}

/// A path's shape for the estimates: at each point, the alternatives within the bound tried
/// before the one taken, and all of them.
fn shape(path: &[Point], bound: Option<u32>) -> impl Iterator<Item = (usize, usize)> + '_ {
    path.iter().map(move |p| {
        let within = |i: &usize| within(bound, p.cost(*i));
        let before = (0..p.taken).filter(within).count();
        (before, (0..p.order.len()).filter(within).count())
    })
}
