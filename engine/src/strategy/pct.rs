//! Probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, "A
//! Randomized Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010).
//!
//! Each execution gives the threads random distinct priorities and picks `depth - 1` change
//! points uniformly among the first `k` steps (but the first, whose change the initial
//! priorities already make; see `begin_execution`); it always runs the
//! highest-priority runnable thread, and at the `i`-th change point lowers the running thread
//! to priority `i`, below every initial priority. A bug of depth `d` in a model with `n`
//! threads and `k` steps is then found by each execution with probability at least
//! `1 / (n * k^(d-1))`. A step here is a decision between threads (where two or more could
//! run), as in the paper, where only such points are scheduling points: counting the switch
//! points where one thread alone can run would make `k` larger for nothing, and change
//! points falling there would pile up on the next decision. `k` is learned: the most
//! decisions any execution of the earlier epochs of the run made (the driver runs PCT in
//! epochs of doubling size, so that executions of one epoch can run in parallel and the
//! result does not depend on the parallelism). One strategy value drives one execution.
//!
//! A thread that *repeats a spin* (it yields, hints a spin loop or fails a `try_lock` again
//! at a place where it did so before, and no other thread has run since: see
//! `runtime::events::spun`) drops below every other thread, so a spin loop waiting for a
//! lower-priority thread lets it run instead of stalling the execution. A thread that yields
//! once, or yields again after others ran, keeps its priority: demoting it at its first
//! yield would make every schedule in which it goes on past the yield before the threads it
//! let run unreachable, whatever the seed (a `watch` value overwritten before it is read),
//! and the guarantee above would not hold for a program that yields but does not spin. A
//! spin loop costs one round more before it is demoted.
//!
//! Other decisions (which store a load reads, ...) pick each option with equal probability,
//! as random does: the probabilistic guarantee above is about the order of threads only.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Choice, Pick, Refusal, Setup, Strategy};
use crate::op::Tid;
use crate::settings::StrategyKind;

/// `k` for the first execution, before any has finished.
const INITIAL_STEP_BOUND: u64 = 64;

/// PCT with bug depth `depth`.
#[derive(Debug)]
pub struct PctStrategy {
    rng: Pcg64Mcg,
    /// The bug depth `d` (at least 1): `d - 1` change points per execution.
    depth: u32,
    /// Estimated steps of an execution: the most any execution of earlier epochs took
    /// (`None` in the first epoch).
    step_bound: Option<u64>,
    /// Priority of each thread seen in this execution, by id; higher runs first. Initial
    /// priorities are at least `depth`; change points assign `1..depth`; spinning assigns
    /// values below zero, the latest spinner lowest.
    priority: Vec<Option<i64>>,
    /// This execution's change points (decisions between threads, from 2), ascending and
    /// distinct (a point drawn twice counts once); `change_points[..applied]` are used.
    change_points: Vec<u64>,
    applied: usize,
    /// Decisions between threads made so far in this execution.
    decisions: u64,
    /// How many spin demotions this execution has made (each goes below the previous).
    spins: i64,
    /// The thread that ran last (it takes the change points).
    last: Option<Tid>,
}

/// PCT's maker (its row in `listing.rs`): the strategy of one execution, from its seed, the depth and what
/// the execution learned of `k`.
pub(super) fn make(setup: &Setup) -> Box<dyn Strategy> {
    let StrategyKind::Pct { depth } = setup.kind else {
        unreachable!("PCT's maker is asked for {:?}", setup.kind)
    };
    Box::new(PctStrategy::new(setup.seed, depth, setup.learned))
}

impl PctStrategy {
    /// The strategy of one execution: its seed, the bug depth, and the learned `k`.
    pub fn new(seed: u64, depth: u32, step_bound: Option<u64>) -> Self {
        PctStrategy {
            rng: Pcg64Mcg::seed_from_u64(seed),
            depth: depth.max(1),
            step_bound,
            priority: Vec::new(),
            change_points: Vec::new(),
            applied: 0,
            decisions: 0,
            spins: 0,
            last: None,
        }
    }

    fn priority_of(&mut self, t: Tid) -> i64 {
        if self.priority.len() <= t {
            self.priority.resize(t + 1, None);
        }
        let depth = i64::from(self.depth);
        // Distinct with overwhelming probability; equal draws fall back to the lower id.
        *self.priority[t].get_or_insert_with(|| depth + i64::from(self.rng.random::<u32>()))
    }

    fn set_priority(&mut self, t: Tid, p: i64) {
        self.priority_of(t);
        self.priority[t] = Some(p);
    }
}

impl Strategy for PctStrategy {
    fn reads_ops(&self) -> bool {
        false
    }

    fn begin_execution(&mut self) -> bool {
        self.priority.clear();
        self.applied = 0;
        self.decisions = 0;
        self.spins = 0;
        self.last = None;
        // A change point at the first decision would only repeat what the random initial
        // priorities already decide (which thread goes first), and force it; one at `k + 1`
        // (like one past an execution's last decision) never comes. So each is drawn among
        // decisions 2 to `k + 1`: in an execution of a few decisions, `depth - 1` distinct
        // points would fall on every one of them and force one schedule.
        let k = self.step_bound.unwrap_or(INITIAL_STEP_BOUND).max(1);
        self.change_points = (1..self.depth)
            .map(|_| self.rng.random_range(2..=k + 1))
            .collect();
        self.change_points.sort_unstable();
        self.change_points.dedup();
        true
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        self.decisions += 1;
        while self.applied < self.change_points.len()
            && self.change_points[self.applied] <= self.decisions
        {
            self.applied += 1;
            if let Some(t) = self.last.or(choice.current) {
                self.set_priority(t, i64::from(self.depth) - self.applied as i64);
            }
        }
        if let (Some(t), true) = (choice.current, choice.current_spins) {
            self.spins += 1;
            self.set_priority(t, -self.spins);
        }
        let mut best = choice.runnable[0];
        let mut best_p = self.priority_of(best);
        for &t in &choice.runnable[1..] {
            let p = self.priority_of(t);
            if p > best_p {
                (best, best_p) = (t, p);
            }
        }
        self.last = Some(best);
        Ok(best)
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        Ok(super::random::uniform_below(&mut self.rng, pick.options))
    }
}
