//! `Builder::pass_at_max_steps`: an execution that reaches `max_steps` ends there as a
//! pass (shuttle's `MaxSteps::ContinueAfter`), its threads unwound; a bug before the limit
//! is still found, and the report counts the executions cut.

use std::sync::Arc as StdArc;
use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize as ModelUsize, Ordering};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind, thread};

use crate::common::SUBSTRATES;

/// A value a server thread owns, which counts its drop.
struct Owned(Option<StdArc<AtomicUsize>>);

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(dropped) = &self.0 {
            dropped.fetch_add(1, StdOrdering::SeqCst);
        }
    }
}

/// A server thread that serves for ever (nobody ever stops it), owning an `Owned` that
/// counts in `dropped`.
fn server(
    stop: &Arc<AtomicBool>,
    served: &Arc<ModelUsize>,
    dropped: Option<StdArc<AtomicUsize>>,
) -> thread::JoinHandle<()> {
    let (stop, served) = (Arc::clone(stop), Arc::clone(served));
    thread::spawn(move || {
        let _owned = Owned(dropped);
        while !stop.load(Ordering::SeqCst) {
            served.fetch_add(1, Ordering::SeqCst);
            thread::yield_now();
        }
    })
}

/// Two clients each add one to a count with a load and a store (an update can be lost)
/// while a server runs for ever.
fn clients_and_a_server() {
    let (stop, served) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(ModelUsize::new(0)),
    );
    let _server = server(&stop, &served, None);
    let count = Arc::new(ModelUsize::new(0));
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let count = Arc::clone(&count);
            thread::spawn(move || {
                let seen = count.load(Ordering::SeqCst);
                count.store(seen + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    assert_eq!(count.load(Ordering::SeqCst), 2, "an update was lost");
}

#[test]
fn a_model_that_never_ends_passes_and_its_threads_are_unwound() {
    for substrate in SUBSTRATES {
        let dropped = StdArc::new(AtomicUsize::new(0));
        let model = || {
            let (stop, served) = (
                Arc::new(AtomicBool::new(false)),
                Arc::new(ModelUsize::new(0)),
            );
            let server = server(&stop, &served, Some(StdArc::clone(&dropped)));
            // Blocked in `join` when the server reaches the limit, yet unwound too.
            let _mine = Owned(Some(StdArc::clone(&dropped)));
            served.load(Ordering::SeqCst);
            server.join().unwrap();
        };
        let livelock = Builder::new()
            .substrate(substrate)
            .iterations(3)
            .max_steps(200)
            .check(model)
            .expect_err("by default an execution that never ends is a livelock");
        assert_eq!(livelock.kind(), FailureKind::Livelock, "{livelock}");
        dropped.store(0, StdOrdering::SeqCst);
        let report = Builder::new()
            .substrate(substrate)
            .seed(4)
            .iterations(20)
            .max_steps(200)
            .pass_at_max_steps(true)
            .check(model)
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert_eq!(report.executions, 20, "{report}");
        assert_eq!(report.cut_at_max_steps, 20, "{report}");
        let text = report.to_string();
        assert!(
            text.contains(
                "20 executions passed (up to max_steps: 20 executions ended there as passes)"
            ),
            "{text}"
        );
        assert_eq!(
            dropped.load(StdOrdering::SeqCst),
            40,
            "{substrate:?}: each execution's threads were unwound"
        );
    }
}

#[test]
fn a_bug_before_max_steps_is_found_and_replays() {
    for substrate in SUBSTRATES {
        let builder = Builder::new()
            .substrate(substrate)
            .seed(1)
            .iterations(500)
            .max_steps(300)
            .pass_at_max_steps(true);
        let failure = builder
            .check(clients_and_a_server)
            .expect_err("the lost update is found");
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert!(
            failure.message().contains("an update was lost"),
            "{failure}"
        );
        let replayed = builder.replay(clients_and_a_server, failure.schedule());
        assert_eq!(replayed.unwrap_err(), failure);
    }
}

#[test]
fn an_exhausted_search_says_it_covered_schedules_up_to_max_steps() {
    let model = || {
        let (stop, served) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(ModelUsize::new(0)),
        );
        let _server = server(&stop, &served, None);
        served.load(Ordering::SeqCst);
    };
    for reduction in [Reduction::Dpor, Reduction::Off] {
        let report = Builder::new()
            .strategy(StrategyKind::Dfs {
                max_preemptions: None,
            })
            .reduction(reduction)
            .max_steps(12)
            .pass_at_max_steps(true)
            .check(model)
            .unwrap_or_else(|f| panic!("{reduction:?}: {f}"));
        assert!(report.exhausted, "{report}");
        assert_eq!(report.cut_at_max_steps, report.executions, "{report}");
        assert!(
            report.to_string().contains("; up to max_steps: "),
            "{report}"
        );
    }
}
