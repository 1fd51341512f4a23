//! The modelled `sync::Arc`: its drops synchronize as std's reference counts do (a
//! destructor sees what every owner did), a cycle left alive is a leak reported under every
//! strategy, and `Weak` and `dyn` values work.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use crate::common::line_of;
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::{Arc, Mutex, Weak};
use interleave_test::{Builder, FailureKind, Schedule, StrategyKind, thread};

const DFS: StrategyKind = StrategyKind::Dfs {
    max_preemptions: None,
};

/// Whose destructor writes the cell its owners wrote, and says which thread ran it.
struct Data {
    cell: UnsafeCell<u32>,
    dropped_by: &'static StdMutex<BTreeSet<Option<String>>>,
}

impl Drop for Data {
    fn drop(&mut self) {
        self.cell.with_mut(|_| ());
        let name = thread::current().name().map(str::to_owned);
        self.dropped_by.lock().unwrap().insert(name);
    }
}

static DROPPED_BY: StdMutex<BTreeSet<Option<String>>> = StdMutex::new(BTreeSet::new());

#[test]
fn the_last_drop_sees_what_every_owner_did() {
    // The spawned thread writes, then drops its reference; whichever thread drops last runs
    // the destructor, which writes too: never a race, in any of the schedules.
    let report = Builder::new()
        .strategy(DFS)
        .check(|| {
            let gate = Arc::new(Mutex::new(()));
            let a = Arc::new(Data {
                cell: UnsafeCell::new(0),
                dropped_by: &DROPPED_BY,
            });
            let (b, gate2) = (Arc::clone(&a), Arc::clone(&gate));
            let t = thread::Builder::new()
                .name("owner".into())
                .spawn(move || {
                    b.cell.with_mut(|_| ());
                    drop(gate2.lock().unwrap());
                    drop(b);
                })
                .unwrap();
            drop(gate.lock().unwrap());
            drop(a);
            t.join().unwrap();
        })
        .unwrap();
    assert!(report.exhausted, "{report}");
    // Both orders of the two drops are explored.
    let by = DROPPED_BY.lock().unwrap().clone();
    assert_eq!(
        by,
        BTreeSet::from([Some("main".to_owned()), Some("owner".to_owned())]),
        "{report}"
    );
}

static OTHER: StdMutex<BTreeSet<Option<String>>> = StdMutex::new(BTreeSet::new());

#[test]
fn without_the_model_of_arc_the_destructor_races() {
    // The same with std's `Arc`, whose counts the model does not see: a destructor run by
    // main writes after the spawned thread's write with nothing ordering them. DFS without
    // reduction finds it (it tries the spawned thread at main's yield); with reduction
    // nothing would tell DPOR that std's drop is where the destructor runs.
    let failure = Builder::new()
        .strategy(DFS)
        .reduction(interleave_test::Reduction::Off)
        .check(|| {
            let a = std::sync::Arc::new(Data {
                cell: UnsafeCell::new(0),
                dropped_by: &OTHER,
            });
            let b = std::sync::Arc::clone(&a);
            let t = thread::spawn(move || {
                b.cell.with_mut(|_| ());
                drop(b);
            });
            thread::yield_now();
            drop(a);
            t.join().unwrap();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::DataRace, "{failure}");
}

/// Two nodes that point at each other: neither is ever dropped.
fn cycle() {
    struct Node {
        next: Mutex<Option<Arc<Node>>>,
    }
    let a = Arc::new(Node {
        next: Mutex::new(None),
    }); // FIRST_NODE
    let b = Arc::new(Node {
        next: Mutex::new(Some(Arc::clone(&a))),
    }); // SECOND_NODE
    let t = thread::spawn(move || {
        *a.next.lock().unwrap() = Some(b);
    });
    t.join().unwrap();
}

#[test]
fn a_cycle_of_arcs_is_a_leak_naming_where_each_was_created() {
    for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 2 }, DFS] {
        let builder = Builder::new().strategy(strategy).seed(2).iterations(10);
        let failure = builder.clone().check(cycle).unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Leak, "{strategy:?}: {failure}");
        assert_eq!(failure.iteration(), 0, "every execution leaks");
        // Each node is created on the line before its marker (the `Arc::new(` line).
        let lines: Vec<u32> = failure
            .threads()
            .iter()
            .map(|r| r.location().unwrap().line())
            .collect();
        assert_eq!(
            lines,
            [
                line_of(include_str!("arc_leaks.rs"), "FIRST_NODE") - 2,
                line_of(include_str!("arc_leaks.rs"), "SECOND_NODE") - 2
            ],
            "{failure}"
        );
        assert!(
            failure.message().starts_with("2 Arcs are still alive"),
            "{failure}"
        );
        let schedule = Schedule::from_json(&failure.schedule().to_json()).unwrap();
        assert_eq!(builder.replay(cycle, &schedule).unwrap_err(), failure);
    }
}

#[test]
fn weak_references_and_dyn_values_work_and_leak_nothing() {
    trait Speak: Send + Sync {
        fn word(&self) -> &'static str;
    }
    struct Dog;
    impl Speak for Dog {
        fn word(&self) -> &'static str {
            "woof"
        }
    }
    let words = StdMutex::new(Vec::new());
    Builder::new()
        .strategy(DFS)
        .check(|| {
            let dog: Arc<dyn Speak> = Arc::from(Box::new(Dog) as Box<dyn Speak>);
            let weak: Weak<dyn Speak> = Arc::downgrade(&dog);
            let t = thread::spawn(move || weak.upgrade().map(|d| d.word()));
            let heard = t.join().unwrap();
            assert_eq!(heard, Some("woof"));
            assert_eq!(Arc::strong_count(&dog), 1);
            words.lock().unwrap().push(dog.word());
            let n = Arc::new(5);
            assert_eq!(Arc::try_unwrap(n), Ok(5));
        })
        .unwrap();
    assert_eq!(*words.lock().unwrap(), ["woof"]);
}
