//! The body of an `async fn` test (`#[interleave] async fn`, `#[tokio::test]`): the
//! attribute runs it with the crate's `future::block_on` and names no runtime; the Tokio
//! module makes the runtime the test's arguments ask for when the body first needs one,
//! and the body's end drops it. It must run exactly as inside that runtime's `block_on`:
//! same schedules, same outcomes, the tasks left at the end dropped the same way.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::SeqCst};

use interleave_test::__private::block_on_test;
use interleave_test::future::{self, RuntimeArgs};
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Reduction, Report, Substrate};
use interleave_test_tokio::runtime::{self, Handle, LocalRuntime, RuntimeFlavor};
use interleave_test_tokio::{self as tokio_mod, task};

use crate::common::{SUBSTRATES, dfs};

/// Counts the drops of the futures of tasks still waiting when their runtime went away.
struct Dropped<'a>(&'a StdAtomicUsize);

impl Drop for Dropped<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// The flavours of a test body: `(multi_thread, worker_threads, local)`.
const FLAVORS: [(bool, Option<usize>, bool); 3] = [
    (false, None, false),
    (true, Some(3), false),
    (false, None, true),
];

/// A body that asks its runtime's flavour, spawns two tasks that race on a counter and a
/// third that never ends (on a local flavour, a `!Send` one without a set), and reads the
/// counter after one of the racers.
async fn body(flavor: RuntimeFlavor, local: bool, drops: &'static StdAtomicUsize) -> usize {
    assert_eq!(Handle::current().runtime_flavor(), flavor);
    let n = Arc::new(AtomicUsize::new(0));
    let racers: Vec<_> = (0..2)
        .map(|_| {
            let n = Arc::clone(&n);
            tokio_mod::spawn(async move { n.fetch_add(1, Ordering::SeqCst) })
        })
        .collect();
    let dropped = Dropped(drops);
    let forever = async move {
        let _dropped = dropped;
        std::future::pending::<()>().await;
    };
    let _forever = match local {
        true => task::spawn_local(forever),
        false => tokio_mod::spawn(forever),
    };
    let first = racers.into_iter().next().expect("two racers");
    first.await.unwrap() * 10 + n.load(Ordering::SeqCst)
}

/// Every execution of `run` under DFS on `substrate`: its number, the outcomes, and how
/// many waiting futures were dropped.
fn explore(
    substrate: Substrate,
    run: impl Fn(&'static StdAtomicUsize) -> usize + Sync,
) -> (Report, BTreeSet<usize>, usize) {
    let drops: &'static StdAtomicUsize = Box::leak(Box::new(StdAtomicUsize::new(0)));
    let seen = StdMutex::new(BTreeSet::new());
    let report = dfs(substrate, Reduction::Dpor, None)
        .check(|| {
            let got = run(drops);
            seen.lock().unwrap().insert(got);
        })
        .unwrap();
    (report, seen.into_inner().unwrap(), drops.load(SeqCst))
}

/// The same body under `block_on_test` and under the runtime it stands for, built before
/// and dropped after the `block_on` (as `#[tokio::test]` expands): the same number of
/// executions, the same outcomes, and the never-ending task dropped in each execution, on
/// both substrates.
#[test]
fn a_test_body_runs_as_inside_its_runtimes_block_on() {
    for substrate in SUBSTRATES {
        for (multi_thread, workers, local) in FLAVORS {
            same_as_its_runtime(substrate, multi_thread, workers, local);
        }
    }
}

/// One case of [`a_test_body_runs_as_inside_its_runtimes_block_on`].
fn same_as_its_runtime(
    substrate: Substrate,
    multi_thread: bool,
    workers: Option<usize>,
    local: bool,
) {
    let flavor = match multi_thread {
        true => RuntimeFlavor::MultiThread,
        false => RuntimeFlavor::CurrentThread,
    };
    let attribute = explore(substrate, |drops| {
        block_on_test(
            multi_thread,
            workers,
            false,
            local,
            body(flavor, local, drops),
        )
    });
    let runtime = explore(substrate, |drops| match local {
        true => LocalRuntime::new()
            .unwrap()
            .block_on(body(flavor, local, drops)),
        false => {
            let mut builder = match multi_thread {
                true => runtime::Builder::new_multi_thread(),
                false => runtime::Builder::new_current_thread(),
            };
            builder.worker_threads(workers.unwrap_or(2));
            builder
                .build()
                .unwrap()
                .block_on(body(flavor, local, drops))
        }
    });
    let what = format!("{substrate:?}: multi_thread {multi_thread}, local {local}");
    assert!(
        attribute.0.exhausted && attribute.0.executions > 1,
        "{what}"
    );
    assert_eq!(attribute.0.executions, runtime.0.executions, "{what}");
    assert_eq!(attribute.1, runtime.1, "{what}");
    assert_eq!(
        attribute.2 as u64, attribute.0.executions,
        "{what}: one drop each"
    );
    assert_eq!(
        runtime.2 as u64, runtime.0.executions,
        "{what}: one drop each"
    );
}

/// What another layer over the crate sees: the test's arguments, one runtime made on first
/// use, on the body's thread only, dropped when the body ends.
#[test]
fn a_layer_makes_the_runtime_of_a_test_body_once_and_it_ends_with_the_body() {
    static MADE: StdAtomicUsize = StdAtomicUsize::new(0);
    static ENDED: StdAtomicUsize = StdAtomicUsize::new(0);
    struct Made(RuntimeArgs);
    impl Drop for Made {
        fn drop(&mut self) {
            ENDED.fetch_add(1, SeqCst);
        }
    }
    let ask = || {
        let make = |args: &RuntimeArgs| {
            MADE.fetch_add(1, SeqCst);
            Made(*args)
        };
        future::test_runtime(make, |made: &Made| made.0)
    };
    let report = interleave_test::Builder::new()
        .iterations(3)
        .check(|| {
            assert_eq!(ask(), None, "no test body runs yet");
            block_on_test(true, Some(4), true, false, async {
                let args = ask().expect("inside the body");
                assert!(args.multi_thread() && args.start_paused() && !args.local());
                assert_eq!(args.worker_threads(), Some(4));
                assert_eq!(ask(), Some(args));
                assert_eq!(future::spawn(async move { ask() }).await.unwrap(), None);
                assert_eq!(future::block_on(async { ask() }), Some(args), "nested");
            });
            assert_eq!(ask(), None, "the body ended");
        })
        .unwrap();
    assert_eq!(report.executions, 3);
    assert_eq!((MADE.load(SeqCst), ENDED.load(SeqCst)), (3, 3));
}
