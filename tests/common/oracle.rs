//! The oracle of the reduction's optimality: reduced DFS (the engine's DPOR) must run exactly
//! one execution per Mazurkiewicz trace of a model, plus the redundant (sleep-set blocked)
//! executions it reports, which the tests pin.
//!
//! The traces are counted independently of the reduction: plain DFS runs every schedule and
//! a [`TraceCounter`] reduces each to its canonical form, per key the sequence of write-like
//! accesses with the set of read-like accesses between each two (reads commute), each
//! access named by its thread and the index of the event in that thread, and per thread the
//! options its decisions other than the choice of a thread took. Two schedules are the same
//! trace exactly when these agree.
//!
//! Objects are numbered in the order an execution first uses them, so a model the oracle
//! counts uses each of its objects first in the same order in every execution (before it
//! spawns): else two schedules of one trace that first use two objects in other orders
//! count as two.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc as StdArc;

use interleave_engine::hb::{Hb, Key};
use interleave_engine::primitive::{Role, Tid};
use interleave_engine::strategy::{
    Choice, DfsStrategy, DporStrategy, Exhaustive, Pick, Refusal, Strategy,
};
use interleave_test::{Builder, Reduction, StrategyKind};

/// One access in a canonical form: thread, event index in that thread.
type Id = (Tid, u32);

/// Per key (as text, for ordering), the groups of accesses in order: a write-like access, or
/// the set of read-like ones between two of those.
type Signature = BTreeMap<String, Vec<Group>>;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Write(Id),
    Reads(BTreeSet<Id>),
}

/// A DFS strategy that also collects the canonical form of every execution.
struct TraceCounter<S> {
    inner: S,
    traces: StdArc<std::sync::Mutex<BTreeSet<Signature>>>,
    current: Signature,
    counts: Vec<u32>,
}

impl<S: Strategy + Exhaustive> Strategy for TraceCounter<S> {
    fn begin_execution(&mut self) -> bool {
        self.current.clear();
        self.counts.clear();
        self.inner.begin_execution()
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        self.inner.choose(choice)
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        let option = self.inner.pick(pick)?;
        // A trace with other values for its decisions (which future a `block_on` polls
        // next, ...) is another behaviour: each thread's picks, in its order, are part of
        // the canonical form (as `(option, n)`: the `n`th pick of the thread took `option`).
        let picks = self.current.entry(format!("picks of {}", pick.tid));
        let picks = picks.or_default();
        let n = picks.len() as u32;
        picks.push(Group::Write((option, n)));
        Ok(option)
    }

    fn end_execution(&mut self) -> Result<(), Refusal> {
        let signature = std::mem::take(&mut self.current);
        self.traces.lock().unwrap().insert(signature);
        self.inner.end_execution()
    }

    fn exhaustive(&mut self) -> Option<&mut dyn Exhaustive> {
        Some(self)
    }
}

impl<S: Strategy + Exhaustive> Exhaustive for TraceCounter<S> {
    fn redundant(&self) -> u64 {
        self.inner.redundant()
    }

    fn wants_events(&self) -> bool {
        true
    }

    fn event(&mut self, hb: &Hb, index: usize) {
        self.inner.event(hb, index);
        let tid = hb.event(index).tid;
        if self.counts.len() <= tid {
            self.counts.resize(tid + 1, 0);
        }
        let id = (tid, self.counts[tid]);
        self.counts[tid] += 1;
        // An event next to an explicit yield writes `Key::Unseen`, which every event reads.
        let read = (Key::Unseen, Role::Read);
        let touches = hb.touches(index).iter().map(|t| (t.key, t.role));
        let yields = hb.touches(index).iter().any(|t| t.key == Key::Unseen);
        let all: Vec<_> = touches
            .filter(|t| t.0 != Key::Unseen)
            .chain([if yields {
                (Key::Unseen, Role::Write)
            } else {
                read
            }])
            .collect();
        for (key, role) in all {
            let groups = self.current.entry(format!("{key:?}")).or_default();
            match (role.read_like(), groups.last_mut()) {
                (true, Some(Group::Reads(set))) => {
                    set.insert(id);
                }
                (true, _) => groups.push(Group::Reads(BTreeSet::from([id]))),
                (false, _) => groups.push(Group::Write(id)),
            }
        }
    }
}

/// Plain DFS on coroutines: what is counted is the search, not the substrate.
pub(crate) fn plain_dfs() -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(Reduction::Off)
        .substrate(interleave_test::Substrate::Coroutines)
}

/// The number of Mazurkiewicz traces of `model`.
fn traces(model: &(dyn Fn() + Sync)) -> usize {
    count(|| DfsStrategy::new(None), model).0
}

/// Runs `inner` to exhaustion on `model`: the traces it saw, and its executions.
pub(crate) fn count<S: Strategy + Exhaustive + 'static>(
    inner: impl Fn() -> S + Sync,
    model: &(dyn Fn() + Sync),
) -> (usize, u64) {
    count_on(plain_dfs(), inner, model)
}

/// [`count`] under `builder`'s settings (its strategy is replaced by `inner`).
fn count_on<S: Strategy + Exhaustive + 'static>(
    builder: Builder,
    inner: impl Fn() -> S + Sync,
    model: &(dyn Fn() + Sync),
) -> (usize, u64) {
    let found = StdArc::new(std::sync::Mutex::new(BTreeSet::new()));
    let make = || {
        // A search that starts over (tracked) counts afresh.
        found.lock().unwrap().clear();
        TraceCounter {
            inner: inner(),
            traces: StdArc::clone(&found),
            current: Signature::new(),
            counts: Vec::new(),
        }
    };
    let report = builder.check_with_strategy(make, model).unwrap();
    assert!(report.exhausted, "{report}");
    let n = found.lock().unwrap().len();
    (n, report.executions)
}

/// Checks that reduced DFS on `model` runs one execution per trace, plus `redundant`
/// redundant ones, and that the reduction agrees with the plain search's own count.
#[track_caller]
pub(crate) fn assert_optimal(name: &str, model: impl Fn() + Sync, redundant: u64) {
    let traces = traces(&model) as u64;
    let reduced = plain_dfs()
        .reduction(Reduction::Dpor)
        .check(&model)
        .unwrap();
    assert!(reduced.exhausted, "{name}: {reduced}");
    assert_eq!(
        reduced.executions - reduced.redundant,
        traces,
        "{name}: {reduced}"
    );
    assert_eq!(reduced.redundant, redundant, "{name}: {reduced}");
    // Every execution that is not redundant is a trace of its own.
    let (seen, executions) = count(|| DporStrategy::new(None), &model);
    assert_eq!(
        seen as u64, traces,
        "{name}: distinct traces among {executions} executions"
    );
}

/// Checks that reduced DFS on `model`, under `builder`'s settings, runs every trace of the
/// plain search, in `executions` executions: some may repeat a trace where the reduction is
/// not optimal (a model whose threads drop `Arc`s: a sleeping thread whose next event drops
/// one wakes at any other drop, `dpor/mod.rs`'s `as_sleeper`).
#[track_caller]
pub(crate) fn assert_complete(
    name: &str,
    builder: &Builder,
    model: impl Fn() + Sync,
    executions: u64,
) {
    let (traces, _) = count_on(builder.clone(), || DfsStrategy::new(None), &model);
    let (seen, ran) = count_on(builder.clone(), || DporStrategy::new(None), &model);
    assert_eq!(
        seen, traces,
        "{name}: traces the reduction ran, of the plain search's"
    );
    assert_eq!(ran, executions, "{name}: executions");
}

/// The outcomes `model` gives under DFS with `reduction`, each execution recording one.
fn outcomes<T: Ord + Send>(reduction: Reduction, model: impl Fn() -> T + Sync) -> BTreeSet<T> {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(reduction)
        .spurious_wakeups(false)
        .parallelism(1)
        .check(|| {
            let outcome = model();
            seen.lock().unwrap().insert(outcome);
        })
        .unwrap();
    assert!(report.exhausted, "{report}");
    seen.into_inner().unwrap()
}

/// Checks the reduction on `model`, which returns what it observed: optimal against the
/// oracle (with `redundant` redundant executions), and the same outcomes as the plain
/// search (a missing declaration would fool the oracle and the reduction alike).
#[track_caller]
pub(crate) fn check_async<T: Ord + Send + std::fmt::Debug>(
    name: &str,
    model: impl Fn() -> T + Sync,
    redundant: u64,
) {
    assert_optimal(name, || drop(model()), redundant);
    let plain = outcomes(Reduction::Off, &model);
    let reduced = outcomes(Reduction::Dpor, &model);
    assert_eq!(reduced, plain, "{name}: outcomes");
}

/// [`check_async`] for a model the reduction is complete on but not optimal, under
/// `builder`'s settings: every trace of the plain search in `executions` executions
/// ([`assert_complete`]), and the same outcomes as the plain search.
#[track_caller]
pub(crate) fn check_async_complete<T: Ord + Send + std::fmt::Debug>(
    name: &str,
    builder: &Builder,
    model: impl Fn() -> T + Sync,
    executions: u64,
) {
    assert_complete(name, builder, || drop(model()), executions);
    let plain = outcomes(Reduction::Off, &model);
    let reduced = outcomes(Reduction::Dpor, &model);
    assert_eq!(reduced, plain, "{name}: outcomes");
}
