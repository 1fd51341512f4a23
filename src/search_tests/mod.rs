//! Optimality of the reduction (the engine's DPOR, run on the facade's primitives): on small models covering every kind of primitive, reduced
//! DFS runs exactly one execution per Mazurkiewicz trace, plus the redundant (sleep-set
//! blocked) executions it reports, which are pinned.
//!
//! The traces are counted independently of the reduction: plain DFS runs every schedule and
//! a [`TraceCounter`] reduces each to its canonical form, per key the sequence of write-like
//! accesses with the set of read-like accesses between each two (reads commute), each
//! access named by its thread and the index of the event in that thread, and per thread the
//! options its decisions other than the choice of a thread took. Two schedules are the same
//! trace exactly when these agree.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::Location;
use std::sync::Arc as StdArc;

use crate::hb::{Hb, Key};
use crate::primitive::Tid;
use crate::strategy::{Choice, DfsStrategy, DporStrategy, Exhaustive, Pick, Refusal, Strategy};
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::sync::mpsc::{channel, sync_channel};
use crate::sync::{Condvar, Mutex, OnceLock, RwLock};
use crate::{Builder, Reduction, StrategyKind, thread};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`arc_drops` below).
use std::sync::Arc;

mod async_tests;
mod async_wait_tests;

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
        let read = (Key::Unseen, crate::primitive::Role::Read);
        let touches = hb.touches(index).iter().map(|t| (t.key, t.role));
        let yields = hb.touches(index).iter().any(|t| t.key == Key::Unseen);
        let all: Vec<_> = touches
            .filter(|t| t.0 != Key::Unseen)
            .chain([if yields {
                (Key::Unseen, crate::primitive::Role::Write)
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
fn plain_dfs() -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(Reduction::Off)
        .substrate(crate::Substrate::Coroutines)
}

/// The number of Mazurkiewicz traces of `model`.
fn traces(model: &(dyn Fn() + Sync)) -> usize {
    count(|| DfsStrategy::new(None), model).0
}

/// Runs `inner` to exhaustion on `model`: the traces it saw, and its executions.
fn count<S: Strategy + Exhaustive + 'static>(
    inner: impl Fn() -> S + Sync,
    model: &(dyn Fn() + Sync),
) -> (usize, u64) {
    let found = StdArc::new(std::sync::Mutex::new(BTreeSet::new()));
    let make = || -> Box<dyn Strategy> {
        // A search that starts over (tracked) counts afresh.
        found.lock().unwrap().clear();
        Box::new(TraceCounter {
            inner: inner(),
            traces: StdArc::clone(&found),
            current: Signature::new(),
            counts: Vec::new(),
        })
    };
    let report =
        crate::driver::run_sequential(&plain_dfs().plan(), &make, None, &model, Location::caller())
            .unwrap();
    assert!(report.exhausted, "{report}");
    let n = found.lock().unwrap().len();
    (n, report.executions)
}

/// Checks that reduced DFS on `model` runs one execution per trace, plus `redundant`
/// redundant ones, and that the reduction agrees with the plain search's own count.
#[track_caller]
pub(super) fn assert_optimal(name: &str, model: impl Fn() + Sync, redundant: u64) {
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

fn spawn_all(n: usize, body: impl Fn(usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(i))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn atomics_three_threads() {
    assert_optimal(
        "atomics",
        || {
            let x = Arc::new(AtomicUsize::new(0));
            spawn_all(3, move |i| {
                if i == 0 {
                    x.store(1, SeqCst);
                } else {
                    x.fetch_add(x.load(SeqCst), SeqCst);
                }
            });
        },
        0,
    );
}

#[test]
fn mutex_two_threads_twice_with_an_atomic_inside() {
    assert_optimal(
        "mutex",
        || {
            let m = Arc::new(Mutex::new(()));
            let x = Arc::new(AtomicUsize::new(0));
            spawn_all(2, move |_| {
                for _ in 0..2 {
                    let _g = m.lock().unwrap();
                    x.fetch_add(1, SeqCst);
                }
                x.load(SeqCst);
            });
        },
        0,
    );
}

#[test]
fn rwlock_two_readers_and_a_writer() {
    assert_optimal(
        "rwlock",
        || {
            let l = Arc::new(RwLock::new(0));
            spawn_all(3, move |i| match i {
                0 => *l.write().unwrap() += 1,
                _ => drop(*l.read().unwrap()),
            });
        },
        0,
    );
}

#[test]
fn condvar_producer_and_consumer() {
    assert_optimal(
        "condvar",
        || {
            let pair = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
            let p2 = Arc::clone(&pair);
            let producer = thread::spawn(move || {
                *p2.0.lock().unwrap() = Some(7);
                p2.1.notify_one();
            });
            let guard = pair
                .1
                .wait_while(pair.0.lock().unwrap(), |v| v.is_none())
                .unwrap();
            assert_eq!(*guard, Some(7));
            drop(guard);
            producer.join().unwrap();
        },
        0,
    );
}

/// A receive depends only on the send whose value it takes, so many orders of sends and
/// receives commute. Which send fills which slot depends on the order of the sends, so
/// whether a receive conflicts with a send is known only once both ran: source sets
/// without wakeup trees then start executions that sleep sets end as redundant (7, pinned).
#[test]
fn channel_two_producers() {
    assert_optimal(
        "channel",
        || {
            let (tx, rx) = channel();
            let tx2 = tx.clone();
            let a = thread::spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            let b = thread::spawn(move || tx2.send(3).unwrap());
            let got: Vec<u32> = (0..3).map(|_| rx.recv().unwrap()).collect();
            assert_eq!(got.len(), 3);
            a.join().unwrap();
            b.join().unwrap();
        },
        7,
    );
}

#[test]
fn bounded_channel_of_one() {
    assert_optimal(
        "sync_channel",
        || {
            let (tx, rx) = sync_channel(1);
            let t = thread::spawn(move || {
                for i in 0..3 {
                    tx.send(i).unwrap();
                }
            });
            for _ in 0..3 {
                rx.recv().unwrap();
            }
            t.join().unwrap();
        },
        0,
    );
}

#[test]
fn spawn_and_join_nested() {
    assert_optimal(
        "spawn/join",
        || {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = Arc::clone(&x);
            let parent = thread::spawn(move || {
                let x3 = Arc::clone(&x2);
                let child = thread::spawn(move || x3.store(1, SeqCst));
                x2.store(2, SeqCst);
                child.join().unwrap();
                x2.load(SeqCst)
            });
            x.load(SeqCst);
            parent.join().unwrap();
        },
        0,
    );
}

#[test]
fn park_and_unpark() {
    assert_optimal(
        "park",
        || {
            let flag = Arc::new(AtomicBool::new(false));
            let f2 = Arc::clone(&flag);
            let t = thread::spawn(move || {
                while !f2.load(SeqCst) {
                    thread::park();
                }
            });
            flag.store(true, SeqCst);
            t.thread().unpark();
            t.join().unwrap();
        },
        0,
    );
}

#[test]
fn try_lock_against_lock() {
    assert_optimal(
        "try_lock",
        || {
            let m = Arc::new(Mutex::new(0));
            spawn_all(2, move |i| match i {
                0 => *m.lock().unwrap() += 1,
                _ => {
                    if let Ok(mut g) = m.try_lock() {
                        *g += 1;
                    }
                }
            });
        },
        0,
    );
}

#[test]
fn once_lock_initialized_by_two_threads() {
    assert_optimal(
        "once_lock",
        || {
            let cell = Arc::new(OnceLock::new());
            spawn_all(2, move |i| {
                cell.get_or_init(|| i);
            });
        },
        0,
    );
}

/// Three threads each take one mutex twice: the traces are the orders of the six critical
/// sections in which each thread's two come in program order, 6! / (2! 2! 2!) = 90. The
/// count is that formula's rather than plain DFS's, which takes 80 s in a debug build to
/// run every schedule; the reduction's executions are still checked to be 90 different
/// traces.
#[test]
fn three_threads_taking_a_mutex_twice_have_90_traces() {
    let model = || {
        let m = Arc::new(Mutex::new(0));
        spawn_all(3, move |_| {
            for _ in 0..2 {
                *m.lock().unwrap() += 1;
            }
        });
    };
    let reduced = plain_dfs().reduction(Reduction::Dpor).check(model).unwrap();
    assert!(reduced.exhausted, "{reduced}");
    assert_eq!(
        (reduced.executions, reduced.redundant),
        (90, 0),
        "{reduced}"
    );
    let (seen, _) = count(|| DporStrategy::new(None), &model);
    assert_eq!(seen, 90, "distinct traces among the reduction's executions");
}

/// Two threads drop their references to one modelled `Arc` whose destructor records which
/// thread ran it, while main loads what it wrote: the reduction reaches every outcome plain
/// DFS reaches (which of the two drops runs the destructor, and whether main's load sees
/// its store).
#[test]
fn arc_drops_reach_every_outcome() {
    fn outcomes(reduction: Reduction) -> BTreeSet<(usize, usize)> {
        let seen = std::sync::Mutex::new(BTreeSet::new());
        let report = plain_dfs()
            .reduction(reduction)
            .check(|| {
                struct Stores(Arc<AtomicUsize>);
                impl Drop for Stores {
                    fn drop(&mut self) {
                        let name = thread::current().name().map(str::to_owned);
                        self.0
                            .store(if name.as_deref() == Some("t") { 1 } else { 2 }, SeqCst);
                    }
                }
                let x = Arc::new(AtomicUsize::new(0));
                let shared = crate::sync::Arc::new(Stores(Arc::clone(&x)));
                let mine = crate::sync::Arc::clone(&shared);
                let named = |name: &str| thread::Builder::new().name(name.to_owned());
                let t = named("t").spawn(move || drop(mine)).unwrap();
                let u = named("u").spawn(move || drop(shared)).unwrap();
                let early = x.load(SeqCst);
                t.join().unwrap();
                u.join().unwrap();
                seen.lock().unwrap().insert((early, x.load(SeqCst)));
            })
            .unwrap();
        assert!(report.exhausted, "{report}");
        seen.into_inner().unwrap()
    }
    let all = outcomes(Reduction::Off);
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(outcomes(Reduction::Dpor), all);
}
