//! The bound on early wait endings under DFS (`runtime/waits.rs`): each thread may end at
//! most one wait early per execution (a timeout while other threads could still act, a
//! spurious wake-up, a spurious failure), and the report of a search that this bound cut
//! says so. A bug that needs two early timeouts in one thread is beyond DFS; random finds
//! it.

use std::time::Duration;

use crate::common::{BOUNDS, REDUCTIONS, SUBSTRATES, dfs};
use interleave_test::sync::mpsc;
use interleave_test::{Builder, FailureKind, StrategyKind, thread};

/// Main receives twice with a timeout while a thread sends twice: both receives time out
/// only if each ends early, the sender still able to send.
fn two_early_timeouts() {
    let (tx, rx) = mpsc::channel();
    let sender = thread::spawn(move || {
        tx.send(1).unwrap();
        tx.send(2).unwrap();
    });
    let first = rx.recv_timeout(Duration::from_secs(1));
    let second = rx.recv_timeout(Duration::from_secs(1));
    sender.join().unwrap();
    assert!(
        first.is_ok() || second.is_ok(),
        "both receives timed out with values on the way"
    );
}

/// The same with one receive: one early timeout is all it can take.
fn one_timeout() {
    let (tx, rx) = mpsc::channel();
    let sender = thread::spawn(move || tx.send(1).unwrap());
    let got = rx.recv_timeout(Duration::from_secs(1));
    sender.join().unwrap();
    assert!(got.is_ok() || rx.try_recv() == Ok(1));
}

/// The tests of this file choose their substrates themselves: CI's second pass, on OS
/// threads, skips them (`--skip own_substrates::`), since it would only repeat the first.
mod own_substrates {
    use super::*;

    #[test]
    fn dfs_names_the_early_ending_bound_that_kept_it_from_a_bug() {
        for substrate in SUBSTRATES {
            for reduction in REDUCTIONS {
                for bound in BOUNDS {
                    let name = format!("{substrate:?}, {reduction:?}, bound {bound:?}");
                    let report = dfs(substrate, reduction, bound)
                        .check(two_early_timeouts)
                        .unwrap_or_else(|f| panic!("{name}: found beyond the bound: {f}"));
                    assert!(report.exhausted, "{name}: {report}");
                    assert!(report.early_withheld > 0, "{name}: {report}");
                    assert!(
                        report.to_string().contains(&format!(
                            "; at most one early wait ending per thread ({} more not tried)",
                            report.early_withheld
                        )),
                        "{name}: {report}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_search_the_bound_did_not_cut_says_nothing_of_it() {
        for substrate in SUBSTRATES {
            for reduction in REDUCTIONS {
                let report = dfs(substrate, reduction, None).check(one_timeout).unwrap();
                assert!(report.exhausted, "{report}");
                assert_eq!(report.early_withheld, 0, "{report}");
                assert!(!report.to_string().contains("early"), "{report}");
            }
        }
    }

    #[test]
    fn random_finds_the_bug_that_needs_two_early_timeouts() {
        for substrate in SUBSTRATES {
            let failure = Builder::new()
                .strategy(StrategyKind::Random)
                .seed(1)
                .iterations(200)
                .substrate(substrate)
                .check(two_early_timeouts)
                .expect_err("random ends waits early without a limit");
            assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
            assert!(
                failure.message().contains("both receives timed out"),
                "{failure}"
            );
        }
    }
}
