//! `SetOnce`, as Tokio documents it: set once, waited for by tasks, and, as a `static`,
//! empty at the start of every execution. Outcome sets over every execution of exhaustive
//! DFS, on both substrates.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use interleave_test::sync::Arc;
use interleave_test::{Builder, Reduction};
use interleave_test_tokio::sync::{SetOnce, SetOnceError};
use interleave_test_tokio::{self as tokio, task::JoinSet};

use crate::common::{SUBSTRATES, dfs};
use crate::support::{every_execution, poll_once};

/// What `model` returns over every execution of exhaustive DFS, the same on both
/// substrates, with the number of executions.
fn outcomes<T: Ord + std::fmt::Debug + Send, Fut: Future<Output = T>>(
    model: impl Fn() -> Fut + Sync,
) -> (BTreeSet<T>, u64) {
    let mut all = None;
    for substrate in SUBSTRATES {
        let seen = StdMutex::new(BTreeSet::new());
        let report = dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                let outcome = model().await;
                seen.lock().unwrap().insert(outcome);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
        let got = (seen.into_inner().unwrap(), report.executions);
        if let Some(first) = &all {
            assert_eq!(first, &got, "{substrate:?}");
        }
        all = Some(got);
    }
    all.unwrap()
}

/// Two tasks set 1 and 2 while the main task waits: either may win, the other gets its
/// value back, and the waiter returns the winner's.
#[test]
fn one_of_two_setters_wins_and_the_waiter_returns_its_value() {
    let (got, _) = outcomes(|| async {
        let once = Arc::new(SetOnce::new());
        let mut setters = JoinSet::new();
        for v in [1u32, 2] {
            let once = Arc::clone(&once);
            setters.spawn(async move { once.set(v) });
        }
        let waited = *once.wait().await;
        let mut lost = Vec::new();
        while let Some(done) = setters.join_next().await {
            if let Err(SetOnceError(v)) = done.unwrap() {
                lost.push(v);
            }
        }
        (waited, lost)
    });
    assert_eq!(got, BTreeSet::from([(1, vec![2]), (2, vec![1])]));
}

/// A look races a set: `get` and `initialized` see the value or nothing, and agree.
#[test]
fn a_look_before_or_after_the_set_sees_nothing_or_the_value() {
    let (got, _) = outcomes(|| async {
        let once = Arc::new(SetOnce::new());
        let setter = Arc::clone(&once);
        let task = tokio::spawn(async move { setter.set(5).unwrap() });
        let seen = (once.initialized(), once.get().copied());
        task.await.unwrap();
        seen
    });
    // Three orders of the set against the two looks: before both, between, after both.
    assert_eq!(
        got,
        BTreeSet::from([(false, None), (false, Some(5)), (true, Some(5))])
    );
}

/// A wait dropped while it waits leaves nothing behind: a later set succeeds and a new
/// wait returns at once.
#[test]
fn a_dropped_wait_does_not_keep_the_value_from_being_set() {
    every_execution(|| async {
        let once = SetOnce::new();
        {
            let mut wait = std::pin::pin!(once.wait());
            assert!(!poll_once(wait.as_mut()).await, "nothing set yet");
        }
        assert_eq!(once.set(3), Ok(()));
        assert_eq!(*once.wait().await, 3);
        assert_eq!(once.set(4), Err(SetOnceError(4)));
    });
}

static EVENT: SetOnce<u32> = SetOnce::const_new();
static PRESET: SetOnce<u32> = SetOnce::const_new_with(9);

/// A `static` made by `const_new` is empty at the start of every execution, and one made
/// by `const_new_with` holds its value in every execution.
#[test]
fn a_static_starts_empty_or_preset_in_every_execution() {
    let report = Builder::new()
        .iterations(20)
        .check_async(|| async {
            assert_eq!(EVENT.get(), None, "each execution starts empty");
            let setter = tokio::spawn(async { EVENT.set(1) });
            assert_eq!(*EVENT.wait().await, 1);
            setter.await.unwrap().unwrap();
            assert_eq!(PRESET.set(2), Err(SetOnceError(2)));
            assert_eq!(*PRESET.wait().await, 9);
        })
        .unwrap();
    assert_eq!(report.executions, 20);
}

/// Counts the drops of its clones.
#[derive(Clone, Debug, Default)]
struct Dropped(std::sync::Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// The value is dropped once, with its `SetOnce`, unless `into_inner` took it out.
#[test]
fn the_value_is_dropped_with_the_set_once_or_taken_out() {
    let count = Dropped::default();
    let drops = || count.0.load(SeqCst);
    drop(SetOnce::from(count.clone()));
    assert_eq!(drops(), 1);
    let once = SetOnce::new();
    once.set(count.clone()).unwrap();
    drop(once);
    assert_eq!(drops(), 2);
    let taken = SetOnce::new_with(Some(count.clone())).into_inner();
    assert_eq!(drops(), 2, "into_inner gives the value back");
    drop(taken);
    assert_eq!(drops(), 3);
    assert!(SetOnce::<Dropped>::new().into_inner().is_none());
}

#[test]
fn clone_eq_debug_and_the_error_show_the_value() {
    let once = SetOnce::new();
    assert_eq!(format!("{once:?}"), "SetOnce { value: None }");
    assert_eq!(once, SetOnce::default());
    once.set(7u32).unwrap();
    let copy = once.clone();
    assert_eq!((copy.get(), copy == once), (Some(&7), true));
    assert_eq!(format!("{copy:?}"), "SetOnce { value: Some(7) }");
    let err = once.set(8).unwrap_err();
    assert_eq!((err.to_string(), err.0), ("SetOnceError".to_owned(), 8));
}
