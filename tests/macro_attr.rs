//! `#[interleave]` tests that run: each strategy the attribute can name, a `crate = path`
//! through a re-export, and the user's attributes kept (`#[should_panic]`, `#[ignore]`,
//! `#[cfg]`).
//!
//! `racy_counter_loses_an_update` and `async_body_runs_past_an_await` fail on purpose, so
//! each stores its schedule in the regression corpus, `interleave-regressions/macro_attr/`,
//! and every later run replays that file first (which fails the same way, as expected).

use interleave_test::interleave;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::thread;

/// Two threads increment a shared counter with `fetch_add`: never loses an update.
fn atomic_increments() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let t = thread::spawn(move || n2.fetch_add(1, SeqCst));
    n.fetch_add(1, SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(SeqCst), 2);
}

#[interleave]
fn default_settings_pass() {
    atomic_increments();
}

#[interleave(strategy = "dfs")]
fn dfs_passes() {
    let m = Arc::new(Mutex::new(Vec::new()));
    let m2 = Arc::clone(&m);
    let t = thread::spawn(move || m2.lock().unwrap().push(1));
    m.lock().unwrap().push(2);
    t.join().unwrap();
    let mut seen = m.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, [1, 2]);
}

#[interleave(strategy = "pct", depth = 2, seed = 5)]
fn pct_passes() {
    atomic_increments();
}

/// An `async fn` test: its body is the future `block_on` runs as the model, on the main
/// thread; a task it spawns runs beside it.
#[interleave(strategy = "dfs")]
async fn async_dfs_passes() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let task = interleave_test::future::spawn(async move { n2.fetch_add(1, SeqCst) });
    n.fetch_add(1, SeqCst);
    task.await.unwrap();
    assert_eq!(n.load(SeqCst), 2);
}

/// An `async fn` test runs in a current-thread runtime, as under `#[tokio::test]`: a
/// spawned task is a local task of the test's thread, so a blocking loop on that thread
/// never lets it run (a deadlock, checked in `tests/tokio/runtime.rs`); here it runs only
/// when the body awaits, so the count before the await is always 0.
#[interleave(strategy = "dfs")]
async fn async_test_runs_in_a_current_thread_runtime() {
    use interleave_test_tokio::{self as tokio, runtime::Handle, runtime::RuntimeFlavor};
    assert_eq!(
        Handle::current().runtime_flavor(),
        RuntimeFlavor::CurrentThread
    );
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let task = tokio::spawn(async move { n2.fetch_add(1, SeqCst) });
    assert_eq!(n.load(SeqCst), 0, "a local task ran before the first await");
    assert_eq!(task.await.unwrap(), 0);
    assert_eq!(n.load(SeqCst), 1);
}

/// `flavor = "multi_thread"`: the runtime is multi-thread and its tasks are preempted,
/// so both orders of the two increments are seen.
#[interleave(strategy = "dfs", flavor = "multi_thread", worker_threads = 2)]
async fn async_test_in_a_multi_thread_runtime() {
    use interleave_test_tokio::{self as tokio, runtime::Handle, runtime::RuntimeFlavor};
    assert_eq!(
        Handle::current().runtime_flavor(),
        RuntimeFlavor::MultiThread
    );
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let task = tokio::spawn(async move { n2.fetch_add(1, SeqCst) });
    let mine = n.fetch_add(1, SeqCst);
    assert_eq!(task.await.unwrap() + mine, 1);
}

/// `start_paused = true`: a sleep ends exactly at its deadline on the virtual clock.
#[interleave(strategy = "dfs", start_paused = true)]
async fn async_test_with_time_paused() {
    use interleave_test_tokio::time::{self, Duration, Instant};
    let start = Instant::now();
    time::sleep(Duration::from_secs(60)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(60));
}

/// The body of an `async fn` test runs to its end, past its `.await`s: the panic after one
/// is found (and stored in the corpus, as `racy_counter_loses_an_update`'s is).
#[interleave(iterations = 10, seed = 2)]
#[should_panic(expected = "after the await")]
async fn async_body_runs_past_an_await() {
    interleave_test::future::yield_now().await;
    panic!("after the await");
}

/// A test may return `Result<(), E>`, as a `#[test]` may: `Ok` passes, and `?` inside the
/// body returns from the body (here a `JoinError`, which converts into a boxed error).
#[interleave(strategy = "dfs")]
fn returns_ok() -> Result<(), String> {
    let n = thread::spawn(|| 2)
        .join()
        .map_err(|_| "the thread panicked")?;
    assert_eq!(n, 2);
    Ok(())
}

#[interleave(strategy = "dfs", flavor = "multi_thread")]
async fn async_returns_ok_through_question_marks()
-> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let task = interleave_test_tokio::spawn(async { 7 });
    assert_eq!(task.await?, 7);
    let parsed: u32 = "12".parse()?;
    assert_eq!(parsed, 12);
    Ok(())
}

/// An `Err` the body returns fails the execution as a panic with the error's `Debug`, in
/// the standard harness's words (and the schedule is stored, as the racy counter's is).
#[interleave(iterations = 10, seed = 4)]
#[should_panic(expected = "Error: ParseIntError { kind: InvalidDigit }")]
async fn async_returned_err_fails_the_test() -> Result<(), std::num::ParseIntError> {
    interleave_test::future::yield_now().await;
    let _: u32 = "x".parse()?;
    Ok(())
}

/// Load then store: an update is lost when both threads load before either stores. The
/// random strategy finds that within its first few executions from seed 1.
#[interleave(iterations = 1000, seed = 1)]
#[should_panic(expected = "interleave-test found a panic")]
fn racy_counter_loses_an_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let seen = n.load(SeqCst);
                n.store(seen + 1, SeqCst);
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 2, "an increment was lost");
}

/// A crate that wraps interleave-test re-exports it; its users name it with `crate = path`.
mod reexport {
    pub(crate) use ::interleave_test;
}

#[interleave(
    crate = reexport::interleave_test,
    strategy = "dfs",
    max_preemptions = 1,
    max_steps = 1_000,
)]
fn crate_path_through_a_reexport() {
    atomic_increments();
}

#[interleave(strategy = "random", iterations = 50, seed = 3, max_steps = 10_000)]
fn every_numeric_argument() -> () {
    atomic_increments();
}

/// Compiles only if `#[cfg(any())]` stays on the function and removes it.
#[interleave]
#[cfg(any())]
fn configured_out() {
    this_function_does_not_exist();
}

/// Listed as ignored only if `#[ignore]` stays on the function (checked below); passes when
/// run with `--include-ignored`.
#[interleave(iterations = 10)]
#[ignore = "checks that #[ignore] is kept"]
fn ignored_model() {
    atomic_increments();
}

/// The test binary itself lists `ignored_model` among its ignored tests.
#[test]
fn ignore_attribute_is_kept() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--list", "--ignored"])
        .output()
        .unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    let ignored: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .collect();
    assert_eq!(
        ignored,
        ["ignored_model"],
        "--list --ignored printed:\n{listed}"
    );
}
