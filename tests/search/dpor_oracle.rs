//! Optimality of the reduction on the std-shaped primitives: on small models covering every
//! kind of primitive, reduced DFS runs exactly one execution per Mazurkiewicz trace, plus
//! the redundant executions it reports, which are pinned (the oracle: `common/oracle.rs`).

use std::collections::BTreeSet;

use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::mpsc::{channel, sync_channel};
use interleave_test::sync::{Condvar, Mutex, OnceLock, RwLock};
use interleave_test::{Reduction, thread};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`arc_drops` below).
use std::sync::Arc;

use interleave_engine::strategy::DporStrategy;

use crate::common::oracle::{assert_optimal, count, plain_dfs};
use crate::dpor::spawn_all;

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
                let shared = interleave_test::sync::Arc::new(Stores(Arc::clone(&x)));
                let mine = interleave_test::sync::Arc::clone(&shared);
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
