//! Depth-first search with dynamic partial-order reduction: one execution per class of
//! equivalent schedules, instead of every schedule.
//!
//! Two schedules are equivalent (the same Mazurkiewicz trace) when one becomes the other by
//! swapping adjacent events of different threads that do not conflict (`hb` module): they
//! reach the same state. The search runs one execution, finds the pairs of events that race
//! (conflict, and nothing else orders them), and for each race arranges that a later
//! execution tries the other order, by scheduling at the point just before the first event
//! some thread that starts that other order.
//!
//! - **Unbounded** (Abdulla, Aronis, Jonsson and Sagonas, "Optimal Dynamic Partial Order
//!   Reduction", POPL 2014, their source-DPOR with sleep sets): for a race between `e` and a
//!   later `e2`, let `v` be the events after `e` that do not happen after it, then `e2`; the
//!   *initials* of `v` are the threads whose first event in `v` nothing in `v` precedes.
//!   Invariant: after every execution, each point where `e` was chosen has, among the
//!   threads it explored, will explore or has asleep, one of those initials that could run
//!   there. *Sleep sets* (Godefroid): once a thread's branch at a point is explored, the
//!   thread sleeps in the later branches of that point until an event conflicting with its
//!   next one runs; a sleeping thread is never chosen. Invariant: a sleeping thread's next
//!   event, run now, would lead only to schedules already explored. An execution that
//!   reaches a point where every thread that can run sleeps is *redundant*: it finishes
//!   (its failures are real) but adds no branches. Without wakeup trees (the paper's
//!   optimal algorithm) a few executions can be redundant; the report counts them.
//! - **With a preemption bound** (Coons, Musuvathi and McKinley, "Bounded Partial-Order
//!   Reduction", OOPSLA 2013): the bound makes otherwise independent events dependent, so
//!   a race adds its thread (or, if it cannot run there, every thread that can) both at the
//!   point before `e` and at the point where `e`'s thread last started running, where
//!   switching to another thread costs no more than the switch made there; only branches
//!   within the bound run. Invariant: every state reachable with at most `bound`
//!   preemptions is reached.
//! - **Sleep sets under a bound** take the cost into account. At a point `P` whose current
//!   thread is `c`, once `c`'s branch is explored, `c` sleeps in the other branches `u`
//!   (and nothing else does). Why no state within the bound is lost: a schedule
//!   `u·α·c·β` from `P` in which `c`'s event commutes with `u·α` ends in the same state as
//!   `c·u·α·β`, which `c`'s branch covers if it costs no more preemptions. Count the
//!   switches that differ: `c·u·α·β` pays at most one (`c` to `u`, if `c` can go on) where
//!   `u·α·c·β` pays one at `P` (`c` to `u`); at the end of `α`, `c·u·α·β` switches from
//!   `α`'s last thread `x` to `β`, which costs no more than `u·α·c·β`'s switch from `x` to
//!   `c`, *provided* `x` can go on in both or in neither; and `c`'s own switch into `β`
//!   costs the same in both or is free. Inside `α` the switches are the same, again
//!   provided each thread that switches away can go on in both. Only one thing breaks
//!   that proviso: `c`'s event lets a thread go on that could not (an unlock, a send, a
//!   store that ends a spin wait), so a switch away from that thread that was free in
//!   `u·α·c·β` costs a preemption in `c·u·α·β`. So at every free switch (the thread
//!   switched from cannot go on), every sleeper whose event does more than read wakes
//!   (`wake_enablers`); an event that only reads enables nothing. A sleeper chosen at a
//!   point where it cost no less than the chosen thread would need the same argument
//!   with a cost that can be higher, so only the current thread sleeps. Checked against
//!   plain DFS at bounds 0 to 3 by `tests/dpor_soundness.rs`, which fails without the
//!   waking at free switches (program 1000563 at bound 1: an unlock).
//!
//! A thread that repeated a spin (`runtime/spins.rs`) waits like a blocked thread: the event
//! that changes what it observed releases it (`Key::Yield`), and whether it repeats depends
//! only on accesses that already conflict.

use super::estimate::Search;
use super::walk::{Seen, Walk, check_replayed, check_replayed_pick};
use super::{Choice, Estimate, Exhaustive, Pick, Refusal, Strategy};
use crate::hb::{Hb, Key, Touch, conflict};
use crate::op::PickKind;
use crate::op::{Op, Role, Tid};

/// A thread and the accesses of its next event (learned when it ran from the point).
type Sleeper = (Tid, Vec<Touch>);

/// One decision on the current path.
#[derive(Clone, Debug)]
struct Point {
    runnable: Vec<Tid>,
    ops: Vec<Op>,
    current: Option<Tid>,
    /// The thread chosen on the current path.
    taken: Tid,
    /// Threads to explore from here, explored ones included.
    backtrack: Vec<Tid>,
    /// Threads explored (or being explored) from here, in order, with their event's
    /// accesses.
    done: Vec<Sleeper>,
    /// Threads asleep on arrival.
    sleep: Vec<Sleeper>,
    preemptions_before: u32,
    /// For a decision other than a thread's, its kind: `taken`, `backtrack` and `done`
    /// then hold options, every one of which is explored (which store a load reads is not
    /// a matter of order), and nothing sleeps.
    pick: Option<PickKind>,
}

impl Point {
    /// What the search saw here.
    fn seen(&self) -> Seen<'_> {
        Seen {
            runnable: &self.runnable,
            ops: &self.ops,
            current: self.current,
            pick: self.pick.map(|k| (k, self.backtrack.len())),
        }
    }

    fn cost(&self, t: Tid) -> u32 {
        self.preemptions_before + u32::from(self.current.is_some_and(|c| c != t))
    }

    fn asleep(&self, t: Tid) -> bool {
        self.sleep.iter().any(|(s, _)| *s == t)
    }

    fn explored(&self, t: Tid) -> bool {
        self.done.iter().any(|(d, _)| *d == t)
    }

    /// Asks for thread `t` to be explored here.
    fn want(&mut self, t: Tid) {
        if !self.backtrack.contains(&t) {
            self.backtrack.push(t);
        }
    }
}

/// DFS with source-set DPOR and sleep sets, or bounded POR with cost-aware sleep sets under a
/// preemption bound.
#[derive(Debug)]
pub struct DporStrategy {
    bound: Option<u32>,
    /// The decisions of the current execution; `path[..walk.replay]` are replayed.
    path: Vec<Point>,
    walk: Walk,
    /// Threads asleep now, in the current execution.
    sleep: Vec<Sleeper>,
    /// The current execution reached a point where every thread that could run slept.
    blocked: bool,
    /// Executions that were redundant (sleep-set blocked).
    redundant: u64,
    /// The thread of the last event of the current execution.
    last_tid: Option<Tid>,
    scratch: Vec<Tid>,
}

impl DporStrategy {
    /// A reduced search of every schedule with at most `bound` preemptions (`None`: all).
    pub fn new(bound: Option<u32>) -> Self {
        DporStrategy {
            bound,
            path: Vec::new(),
            walk: Walk::default(),
            sleep: Vec::new(),
            blocked: false,
            redundant: 0,
            last_tid: None,
            scratch: Vec::new(),
        }
    }

    fn within_bound(&self, cost: u32) -> bool {
        self.bound.is_none_or(|b| cost <= b)
    }

    /// Moves the deepest point with a thread left to explore to it, dropping the points
    /// after it. `false`: nothing is left.
    fn backtrack(&mut self) -> bool {
        while let Some(point) = self.path.last() {
            let next = point.backtrack.iter().copied().find(|&t| {
                !point.explored(t) && !point.asleep(t) && self.within_bound(point.cost(t))
            });
            if let Some(t) = next {
                let point = self.path.last_mut().expect("checked above");
                point.taken = t;
                point.done.push((t, Vec::new()));
                return true;
            }
            self.path.pop();
        }
        false
    }

    fn fresh_point(&mut self, choice: &Choice<'_>) -> Option<Point> {
        let awake = |t: &Tid| !self.sleep.iter().any(|(s, _)| s == t);
        let first = match choice.current {
            Some(c) if awake(&c) => c,
            _ => *choice.runnable.iter().find(|t| awake(t))?,
        };
        Some(Point {
            runnable: choice.runnable.to_vec(),
            ops: choice.ops.to_vec(),
            current: choice.current,
            taken: first,
            backtrack: vec![first],
            done: vec![(first, Vec::new())],
            sleep: self.sleep.clone(),
            preemptions_before: self.walk.preemptions,
            pick: None,
        })
    }

    /// A point for `pick`: every option is explored.
    fn pick_point(&self, pick: &Pick) -> Point {
        let order = pick.kind.search_order(pick.options);
        Point {
            runnable: Vec::new(),
            ops: Vec::new(),
            current: None,
            taken: order[0],
            done: vec![(order[0], Vec::new())],
            backtrack: order,
            sleep: Vec::new(),
            preemptions_before: self.walk.preemptions,
            pick: Some(pick.kind),
        }
    }

    /// Arranges for the race between events `i` and `k` (`i < k`) to be tried the other way.
    fn race(&mut self, hb: &Hb, i: usize, k: usize) {
        if self.bound.is_some() {
            return self.bounded_race(hb, i, k);
        }
        let Some(d) = hb.event(i).decision.map(|d| d as usize) else {
            return;
        };
        if d >= self.path.len() {
            return;
        }
        let mut initials = std::mem::take(&mut self.scratch);
        initials_of(hb, i, k, &mut initials);
        let point = &mut self.path[d];
        initials.retain(|t| point.runnable.contains(t));
        let covered = initials
            .iter()
            .any(|&t| point.backtrack.contains(&t) || point.asleep(t));
        if !covered {
            let p = hb.event(k).tid;
            let pick = if initials.contains(&p) {
                Some(p)
            } else {
                initials.iter().copied().min()
            };
            if let Some(t) = pick {
                point.want(t);
            }
        }
        self.scratch = initials;
    }

    /// Under a bound: tries `k`'s thread at every point of the run of `i`'s thread up to
    /// `i`, from the point where that run started (where switching costs no more than the
    /// switch made there). Where the thread could run a few steps and then block, a switch
    /// in the middle of the run can be the cheapest way to reach the other order.
    fn bounded_race(&mut self, hb: &Hb, i: usize, k: usize) {
        let tid = hb.event(i).tid;
        let mut j = i;
        while j > 0 && hb.event(j - 1).tid == tid {
            j -= 1;
        }
        let q = hb.event(k).tid;
        for x in j..=i {
            if let Some(d) = hb.event(x).decision.map(|d| d as usize)
                && d < self.path.len()
            {
                self.add_or_all(d, q);
            }
        }
    }

    /// Asks for `t` at point `d`, or for every thread that can run there if `t` cannot.
    fn add_or_all(&mut self, d: usize, t: Tid) {
        let point = &mut self.path[d];
        if point.runnable.contains(&t) {
            point.want(t);
        } else {
            for r in point.runnable.clone() {
                point.want(r);
            }
        }
    }

    /// Under a bound, at a switch away from a thread that cannot go on (it blocked, waits or
    /// ended), which costs no preemption: wakes every sleeper whose event could have let that
    /// thread go on, that is, one that does more than read (module notes).
    fn wake_enablers(&mut self) {
        self.sleep
            .retain(|(_, next)| next.iter().all(|touch| touch.role == Role::Read));
    }
}

/// An access of an event as a thread asleep with that event as its next one keeps it: as it
/// is, but that an access to an `Arc`'s counts is a write. Whether a drop is the last one (a
/// write, which conflicts with every other drop) or not (a read, which commutes with the
/// other drops that are not the last: `runtime/arcs.rs`) depends on how many references
/// are left when it runs, and the thread runs it later, after events that may have dropped
/// others: kept as a read, the drop would sleep through another drop that leaves it the
/// last one, and the search would miss the order in which it runs the destructor. As a
/// write it wakes at any other drop, clone or count read of the allocation.
fn as_sleeper(touch: Touch) -> Touch {
    match touch.key {
        Key::Alloc(_) => Touch {
            key: touch.key,
            role: Role::Write,
        },
        _ => touch,
    }
}

/// A path's shape for the estimates: at each point, the branches explored before the one
/// taken, and all the search will explore there as far as it knows now.
fn shape(path: &[Point], bound: Option<u32>) -> impl Iterator<Item = (usize, usize)> + '_ {
    path.iter().map(move |p| {
        let live = |t: &&Tid| {
            p.explored(**t) || (!p.asleep(**t) && bound.is_none_or(|b| p.cost(**t) <= b))
        };
        let before = p.done.len().saturating_sub(1);
        (
            before,
            p.backtrack.iter().filter(live).count().max(p.done.len()),
        )
    })
}

/// The initials of `v`: the events after `i` that do not happen after it, then `k`; a
/// thread is an initial if nothing in `v` happens before its first event in `v`.
fn initials_of(hb: &Hb, i: usize, k: usize, out: &mut Vec<Tid>) {
    out.clear();
    let mut firsts: Vec<(Tid, usize)> = Vec::new();
    for j in (i + 1..k).chain([k]) {
        if j != k && hb.happens_before(i, j) {
            continue;
        }
        let tid = hb.event(j).tid;
        if firsts.iter().any(|&(t, _)| t == tid) {
            continue;
        }
        if !firsts.iter().any(|&(_, f)| hb.happens_before(f, j)) {
            out.push(tid);
        }
        firsts.push((tid, j));
    }
}

impl Strategy for DporStrategy {
    fn begin_execution(&mut self) -> bool {
        let go_on = !self.walk.exhausted() && (self.walk.first() || self.backtrack());
        if !self.walk.begin(go_on, self.path.len()) {
            return false;
        }
        self.sleep.clear();
        self.blocked = false;
        self.last_tid = None;
        true
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        if self.blocked {
            return Ok(choice.current.unwrap_or(choice.runnable[0]));
        }
        if self.walk.depth < self.walk.replay {
            check_replayed(self.walk.depth, self.path[self.walk.depth].seen(), choice)?;
        } else {
            if self.bound.is_some() && choice.current.is_none() {
                self.wake_enablers();
            }
            match self.fresh_point(choice) {
                Some(point) => self.path.push(point),
                None => {
                    self.blocked = true;
                    self.redundant += 1;
                    return Ok(choice.current.unwrap_or(choice.runnable[0]));
                }
            }
        }
        let point = &self.path[self.walk.depth];
        let chosen = point.taken;
        self.sleep.clone_from(&point.sleep);
        let bounded = self.bound.is_some();
        let before = point
            .done
            .iter()
            .filter(|(t, _)| *t != chosen && (!bounded || point.cost(*t) < point.cost(chosen)));
        self.sleep.extend(before.cloned());
        self.walk.preemptions = point.cost(chosen);
        self.walk.depth += 1;
        Ok(chosen)
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        if self.blocked {
            return Ok(0);
        }
        if self.walk.depth < self.walk.replay {
            check_replayed_pick(self.walk.depth, self.path[self.walk.depth].seen(), pick)?;
        } else {
            let point = self.pick_point(pick);
            self.path.push(point);
        }
        let taken = self.path[self.walk.depth].taken;
        self.walk.depth += 1;
        Ok(taken)
    }

    fn end_execution(&mut self) -> Result<(), Refusal> {
        let (path, bound) = (&self.path, self.bound);
        self.walk.end(shape(path, bound), |d| path[d].seen())
    }

    fn exhaustive(&mut self) -> Option<&mut dyn Exhaustive> {
        Some(self)
    }
}

impl Exhaustive for DporStrategy {
    fn wants_events(&self) -> bool {
        true
    }

    fn event(&mut self, hb: &Hb, index: usize) {
        if self.blocked {
            return;
        }
        let ev = hb.event(index);
        let touches = hb.touches(index);
        let switched = self.last_tid.replace(ev.tid).is_some_and(|t| t != ev.tid);
        if self.bound.is_some() && switched && ev.decision.is_none() {
            self.wake_enablers();
        }
        if self.sleep.iter().any(|(t, _)| *t == ev.tid) {
            // A sleeping thread runs because it is the only one that can: every schedule
            // from here was explored already.
            self.blocked = true;
            self.redundant += 1;
            return;
        }

        if let Some(point) = ev.decision.and_then(|d| self.path.get_mut(d as usize))
            && let Some(done) = point.done.last_mut().filter(|(t, _)| *t == ev.tid)
        {
            done.1.clear();
            done.1.extend(touches.iter().map(|&t| as_sleeper(t)));
        }
        self.sleep
            .retain(|(t, next)| *t != ev.tid && !conflict(next, touches));
        for r in 0..hb.races().len() {
            let i = hb.races()[r] as usize;
            self.race(hb, i, index);
        }
    }

    fn redundant(&self) -> u64 {
        self.redundant
    }

    fn estimate(&self) -> Option<Estimate> {
        let search = match self.bound {
            Some(_) => Search::Bounded,
            None => Search::Reduced,
        };
        self.walk.estimate(search)
    }

    fn depth(&self) -> usize {
        self.path.len()
    }
}
