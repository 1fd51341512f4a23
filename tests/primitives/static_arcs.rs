//! Statics are not leaks (issue 17): an `Arc` made for the value of a `LazyLock`,
//! `OnceLock` or `Once` (by its initializer, or in the argument of `OnceLock::set`) lives as
//! long as the cell, and a `static` cell for the process; it is not a `FailureKind::Leak`.
//! A reference the model stores in a static by other means still is, with a message that
//! says a static may hold it, and what a local cell held is checked like anything else.
//! Every test runs on both substrates under random, PCT and DFS.

use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::Relaxed};

use interleave_test::sync::{Arc, LazyLock, Mutex, Once, OnceLock};
use interleave_test::{Builder, Failure, FailureKind, Report, StrategyKind, thread};

use crate::common::{SUBSTRATES, line_of};

const STRATEGIES: [StrategyKind; 3] = [
    StrategyKind::Random,
    StrategyKind::Pct { depth: 2 },
    StrategyKind::Dfs {
        max_preemptions: None,
    },
];

/// This file's text, to find the lines of markers.
const SOURCE: &str = include_str!("static_arcs.rs");

/// Runs `model` under every strategy on both substrates, two executions at once for random
/// and PCT; each run must pass (DFS exhaustively).
fn passes(model: fn()) {
    for (substrate, strategy) in runs() {
        let report: Report = Builder::new()
            .substrate(substrate)
            .strategy(strategy)
            .seed(3)
            .iterations(40)
            .parallelism(2)
            .check(model)
            .unwrap_or_else(|f| panic!("{substrate:?}, {strategy:?}: {f}"));
        if let StrategyKind::Dfs { .. } = strategy {
            assert!(report.exhausted, "{report}");
        }
    }
}

/// The failure of `model` under every strategy on both substrates: a leak in execution 0.
fn leaks(model: fn()) -> Vec<Failure> {
    runs()
        .map(|(substrate, strategy)| {
            let failure = Builder::new()
                .substrate(substrate)
                .strategy(strategy)
                .seed(3)
                .iterations(40)
                .check(model)
                .expect_err("leaks");
            assert_eq!(failure.kind(), FailureKind::Leak, "{strategy:?}: {failure}");
            assert_eq!(failure.iteration(), 0, "{strategy:?}: {failure}");
            failure
        })
        .collect()
}

fn runs() -> impl Iterator<Item = (interleave_test::Substrate, StrategyKind)> {
    SUBSTRATES
        .into_iter()
        .flat_map(|substrate| STRATEGIES.map(|strategy| (substrate, strategy)))
}

/// loom's `lazy_static_arc_doesnt_leak`: the `Arc` a static `LazyLock` made is its value.
#[test]
fn lazy_static_arc_doesnt_leak() {
    static ARC: LazyLock<Arc<usize>> = LazyLock::new(|| Arc::new(1));
    passes(|| assert_eq!(**ARC, 1));
}

/// loom's `lazy_static_arc_race`: the initializer yields, so the other thread waits for it
/// (or runs it) in some schedules.
#[test]
fn lazy_static_arc_race() {
    static ARC: LazyLock<Arc<usize>> = LazyLock::new(|| {
        thread::yield_now();
        Arc::new(1)
    });
    passes(|| {
        let t = thread::spawn(|| assert_eq!(**ARC, 1));
        assert_eq!(**ARC, 1);
        t.join().unwrap();
    });
}

#[test]
fn an_arc_made_by_get_or_init_is_the_static_s() {
    static CELL: OnceLock<Arc<String>> = OnceLock::new();
    passes(|| {
        let t = thread::spawn(|| CELL.get_or_init(|| Arc::new("spawned".into())).len());
        let mine = CELL.get_or_init(|| Arc::new("main".into())).len();
        assert_eq!(t.join().unwrap(), mine);
    });
}

/// Both threads make an `Arc` and give it to `set`: the winner's is the static's, the
/// loser's comes back and is dropped.
#[test]
fn an_arc_passed_to_set_is_the_static_s() {
    static CELL: OnceLock<Arc<usize>> = OnceLock::new();
    passes(|| {
        let t = thread::spawn(|| CELL.set(Arc::new(1)).is_ok());
        let a = Arc::new(2);
        let mine = CELL.set(a).is_ok();
        assert!(t.join().unwrap() != mine, "exactly one set succeeds");
        assert!(matches!(**CELL.get().unwrap(), 1 | 2));
    });
}

/// A `Once`'s closure keeps what it makes in another static.
#[test]
fn an_arc_made_by_call_once_is_the_static_s() {
    static ONCE: Once = Once::new();
    static SLOT: LazyLock<Mutex<Option<Arc<usize>>>> = LazyLock::new(|| Mutex::new(None));
    passes(|| {
        let t = thread::spawn(|| ONCE.call_once(|| *SLOT.lock().unwrap() = Some(Arc::new(7))));
        ONCE.call_once(|| *SLOT.lock().unwrap() = Some(Arc::new(7)));
        t.join().unwrap();
        assert_eq!(SLOT.lock().unwrap().as_deref(), Some(&7));
    });
}

/// The `Arc`s an initializer makes inside the value it returns are the static's too.
#[test]
fn arcs_inside_the_static_s_value_are_the_static_s() {
    type Shared = Arc<Mutex<Vec<Arc<usize>>>>;
    static LIST: LazyLock<Shared> =
        LazyLock::new(|| Arc::new(Mutex::new(vec![Arc::new(1), Arc::new(2)])));
    passes(|| {
        let t = thread::spawn(|| LIST.lock().unwrap().len());
        let sum: usize = LIST.lock().unwrap().iter().map(|a| **a).sum();
        assert_eq!((sum, t.join().unwrap()), (3, 2));
    });
}

/// Where the model's clone is stored in the static of [`a_clone_pushed_into_a_static_is_a_leak`].
static PUSHED: LazyLock<Mutex<Vec<Arc<usize>>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// The model makes an `Arc` and pushes a clone into a static collection: the static keeps
/// that reference after the model, which is reported, saying that a static may hold it.
#[test]
fn a_clone_pushed_into_a_static_is_a_leak() {
    fn model() {
        let mine = Arc::new(5); // PUSHED_ARC
        let t = thread::spawn(|| PUSHED.lock().unwrap().len());
        PUSHED.lock().unwrap().push(Arc::clone(&mine));
        t.join().unwrap();
    }
    for failure in leaks(model) {
        assert_eq!(
            failure.location().unwrap().line(),
            line_of(SOURCE, "PUSHED_ARC"),
            "{failure}"
        );
        let message = failure.message();
        assert!(
            message.starts_with("1 Arc is still alive when every thread had finished: Arc #"),
            "{message}"
        );
        assert!(
            message.contains("has 1 strong reference left. "),
            "{message}"
        );
        assert!(
            message.contains(
                "A static may hold it: a static keeps only the Arcs made for its value, by its \
                 initializer (LazyLock, OnceLock::get_or_init, Once::call_once) or in the \
                 argument of OnceLock::set; a clone the model stores in a static otherwise \
                 (pushed into a static collection, or given to set) is reported. Make the Arc \
                 inside the initializer, or take the reference out of the static before the \
                 model ends"
            ),
            "{message}"
        );
    }
}

/// `set` keeps what its caller made for it just before the call (since its last switch
/// point); an `Arc` the model made earlier and then clones into the cell is the model's.
#[test]
fn an_arc_made_earlier_and_cloned_into_set_is_a_leak() {
    static CELL: OnceLock<Arc<usize>> = OnceLock::new();
    fn model() {
        let mine = Arc::new(5); // EARLIER_ARC
        let t = thread::spawn(|| ());
        CELL.set(Arc::clone(&mine)).unwrap();
        t.join().unwrap();
    }
    for failure in leaks(model) {
        assert_eq!(
            failure.location().unwrap().line(),
            line_of(SOURCE, "EARLIER_ARC"),
            "{failure}"
        );
        assert!(
            failure.message().contains("A static may hold it"),
            "{failure}"
        );
    }
}

/// The model keeps a second reference to the static's `Arc` for ever: the static holds one
/// of the two, and the report says so.
#[test]
fn a_reference_to_the_static_s_arc_kept_by_the_model_is_a_leak() {
    static ARC: LazyLock<Arc<usize>> = LazyLock::new(|| Arc::new(3)); // STATIC_ARC
    fn model() {
        std::mem::forget(Arc::clone(&*ARC));
    }
    for failure in leaks(model) {
        assert_eq!(
            failure.location().unwrap().line(),
            line_of(SOURCE, "STATIC_ARC"),
            "{failure}"
        );
        let message = failure.message();
        assert!(
            message.contains(
                "has 2 strong references left, 1 of them held by the value of LazyLock #"
            ),
            "{message}"
        );
        assert!(message.contains("(made by its initializer)."), "{message}");
    }
}

/// A cell created in the model is dropped with it, and with it what it held: its claims go,
/// so a cycle its initializer made is reported as any other. (The same initializer in a
/// `static` is taken for the static's value: see `runtime::claims`.)
#[test]
fn what_a_local_cell_held_is_checked_for_leaks() {
    #[derive(Default)]
    struct Node {
        next: Mutex<Option<Arc<Node>>>,
    }
    fn model() {
        let cell = OnceLock::new();
        let t = thread::spawn(|| ());
        cell.get_or_init(|| {
            let node = Arc::new(Node::default()); // LOCAL_CYCLE
            *node.next.lock().unwrap() = Some(Arc::clone(&node));
            node
        });
        t.join().unwrap();
    }
    for failure in leaks(model) {
        assert_eq!(
            failure.location().unwrap().line(),
            line_of(SOURCE, "LOCAL_CYCLE"),
            "{failure}"
        );
        assert!(
            failure.message().contains("has 1 strong reference left."),
            "{failure}"
        );
    }
}

/// A local cell whose initializer's `Arc` is used and dropped with it leaks nothing.
#[test]
fn a_local_cell_s_arc_dropped_with_it_is_no_leak() {
    passes(|| {
        let cell = Arc::new(OnceLock::new());
        let theirs = Arc::clone(&cell);
        let t = thread::spawn(move || **theirs.get_or_init(|| Arc::new(4)));
        assert_eq!(**cell.get_or_init(|| Arc::new(4)), 4);
        assert_eq!(t.join().unwrap(), 4);
    });
}

/// `take` hands the value to the model: the cell no longer keeps it, even if the cell
/// itself is then forgotten.
#[test]
fn a_value_taken_out_of_a_cell_is_the_model_s() {
    fn model() {
        let mut cell = OnceLock::new();
        cell.get_or_init(|| Arc::new(6)); // TAKEN_ARC
        std::mem::forget(cell.take().unwrap());
        std::mem::forget(cell);
    }
    for failure in leaks(model) {
        assert_eq!(
            failure.location().unwrap().line(),
            line_of(SOURCE, "TAKEN_ARC"),
            "{failure}"
        );
    }
}

/// Every execution runs the static's initializer again (a value of its own, see
/// `sync/values.rs`), and each keeps its own `Arc`, also with executions running at once.
#[test]
fn every_execution_s_static_arc_is_its_own() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    static ARC: LazyLock<Arc<usize>> = LazyLock::new(|| {
        RUNS.fetch_add(1, Relaxed);
        Arc::new(9)
    });
    for substrate in SUBSTRATES {
        RUNS.store(0, Relaxed);
        let report = Builder::new()
            .substrate(substrate)
            .strategy(StrategyKind::Random)
            .seed(4)
            .iterations(200)
            .parallelism(2)
            .check(|| {
                let t = thread::spawn(|| Arc::strong_count(&ARC));
                let mine = Arc::strong_count(&ARC);
                assert_eq!((mine, t.join().unwrap()), (1, 1));
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert_eq!(report.executions, 200);
        // Once per execution: none had to start over to count the `Arc`'s references.
        assert_eq!(RUNS.load(Relaxed), 200, "{substrate:?}");
    }
}
