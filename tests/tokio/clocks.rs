//! The clock chosen per test (`Builder::clock`, `#[interleave(clock = ...)]`): on the
//! loaded clock a generous timeout fires early, and the failure names the call that armed
//! it; on the paused clock it never does, with any runtime flavour. The clock is recorded
//! in the schedule, and a replay follows the file's clock whatever its builder says.
//! Instants can be taken back from the first `now` of an execution.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Builder, Clock, FailureKind, Reduction, Schedule, interleave};
use interleave_test_tokio::time::{self, Instant};
use interleave_test_tokio::{self as tokio, runtime};

use crate::common::{SUBSTRATES, dfs, line_of};

const MS: Duration = Duration::from_millis(1);
const SOURCE: &str = include_str!("clocks.rs");

/// Runs `body` on a multi-thread runtime, which Tokio refuses to start paused.
fn on_many_threads<T>(body: impl std::future::Future<Output = T>) -> T {
    let rt = runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(body)
}

/// Two milliseconds of work in a task, under a timeout of a second, on a multi-thread
/// runtime: the virtual time it returned at.
fn generous_timeout() -> Duration {
    on_many_threads(async {
        let start = Instant::now();
        let work = tokio::spawn(async {
            time::sleep(2 * MS).await;
            7
        });
        let done = time::timeout(Duration::from_secs(1), work).await; // generous timeout
        assert!(done.is_ok(), "two milliseconds of work took over a second");
        assert_eq!(done.unwrap().unwrap(), 7);
        start.elapsed()
    })
}

#[test]
fn a_generous_timeout_fires_early_only_on_the_loaded_clock() {
    let line = line_of(SOURCE, "// generous timeout");
    for substrate in SUBSTRATES {
        let builder = dfs(substrate, Reduction::Dpor, None);
        let failure = builder
            .clone()
            .check(|| {
                generous_timeout();
            })
            .expect_err("the loaded clock fires the timeout early");
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert_eq!(
            failure.message(),
            "two milliseconds of work took over a second"
        );
        let [fired] = failure.early_timers() else {
            panic!("one timer fired early: {failure}");
        };
        assert!(fired.is_timer());
        assert_eq!(fired.api(), "tokio::time::timeout");
        assert_eq!(fired.location().file(), "tests/tokio/clocks.rs");
        assert_eq!(
            (fired.location().line(), fired.location().column()),
            (line, 20)
        );
        assert_eq!(fired.deadline(), Duration::from_secs(1));
        assert_eq!(fired.early_by(), Duration::from_secs(1), "{failure}");
        assert_eq!(fired.thread().name(), Some("main"));

        let ends = StdMutex::new(BTreeSet::new());
        let report = builder
            .clock(Clock::Paused)
            .check(|| {
                ends.lock().unwrap().insert(generous_timeout());
            })
            .unwrap();
        assert!(report.exhausted, "{substrate:?}");
        // The timeout's timer never fires: the work ends at 2 ms, in every execution.
        assert_eq!(ends.into_inner().unwrap(), BTreeSet::from([2 * MS]));
    }
}

#[test]
fn the_report_names_the_call_that_armed_the_timer_and_its_deadline() {
    let line = line_of(SOURCE, "// generous timeout");
    let failure = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .check(|| {
            generous_timeout();
        })
        .expect_err("found");
    let text = failure.to_string();
    let expected = format!(
        "step {}, thread 'main' (#0): timer armed by `tokio::time::timeout` at \
         tests/tokio/clocks.rs:{line}:20 fired at 1.000s (its deadline), 1s early: the clock \
         was at 0.000s and other threads could still act",
        failure.early_timers()[0].step()
    );
    assert!(text.contains(&expected), "{text}");
    // The decision's line in the recent decisions says the same, shorter.
    let note = format!(
        "(timer armed by `tokio::time::timeout` at tests/tokio/clocks.rs:{line}:20, deadline \
         1.000s)"
    );
    let decision = failure
        .recent()
        .iter()
        .find(|s| s.op().contains("time out now 1 of 2"))
        .expect("the early timeout is among the last decisions");
    assert!(decision.op().ends_with(&note), "{}", decision.op());
}

/// A lost update between two tasks that each sleep 3 ms first: a failure on the paused
/// clock (both wake at 3 ms), whose schedule holds thread decisions and no early timeout.
fn lost_update_after_sleeps() {
    on_many_threads(async {
        let n = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = [3, 3]
            .into_iter()
            .map(|ms| {
                let n = Arc::clone(&n);
                tokio::spawn(async move {
                    time::sleep(ms * MS).await;
                    let seen = n.load(Ordering::SeqCst);
                    n.store(seen + 1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(n.load(Ordering::SeqCst), 2, "an update was lost");
    });
}

#[test]
fn a_paused_schedule_records_its_clock_and_replays_on_it_whatever_the_builder_says() {
    let paused = Builder::new().seed(3).clock(Clock::Paused);
    let failure = paused
        .check(lost_update_after_sleeps)
        .expect_err("the lost update is found");
    assert_eq!(
        failure.message(),
        "assertion `left == right` failed: an update was lost\n  left: 1\n right: 2"
    );
    assert!(failure.early_timers().is_empty(), "{failure}");
    let schedule = failure.schedule();
    assert_eq!(schedule.clock(), Clock::Paused);
    let json = schedule.to_json();
    assert!(json.contains("\n  \"clock\": \"paused\",\n"), "{json}");
    let read = Schedule::from_json(&json).unwrap();
    assert_eq!(&read, schedule);
    // The file wins: replayed by a builder on the loaded clock, the schedule still runs on
    // the paused one, decision for decision, to the same failure.
    for builder in [Builder::new(), paused] {
        let again = builder
            .replay(lost_update_after_sleeps, &read)
            .expect_err("replays the failure");
        assert_eq!(again, failure);
    }
}

#[test]
fn a_loaded_schedule_replays_its_early_timeout_on_a_paused_builder() {
    let failure = Builder::new()
        .seed(5)
        .check(|| {
            generous_timeout();
        })
        .expect_err("found");
    let schedule = Schedule::from_json(&failure.schedule().to_json()).unwrap();
    assert_eq!(schedule.clock(), Clock::Loaded);
    assert!(!failure.schedule().to_json().contains("\"clock\""));
    let again = Builder::new()
        .clock(Clock::Paused)
        .replay(
            || {
                generous_timeout();
            },
            &schedule,
        )
        .expect_err("the file's clock fires the timer early again");
    assert_eq!(again, failure);
    assert_eq!(again.early_timers().len(), 1);
}

/// Tokio's `pause`, `advance` and `resume` under the paused clock: `pause` is not "already
/// frozen", and after `resume` timers still fire only when every task waits.
#[test]
fn tokio_pause_and_resume_work_under_the_paused_clock() {
    let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .clock(Clock::Paused)
        .check_async(|| async {
            let start = Instant::now();
            time::pause();
            time::advance(10 * MS).await;
            assert_eq!(start.elapsed(), 10 * MS);
            time::resume();
            let work = tokio::spawn(time::sleep(2 * MS));
            assert!(time::timeout(Duration::from_secs(1), work).await.is_ok());
            assert_eq!(start.elapsed(), 12 * MS);
        })
        .unwrap();
    assert!(report.exhausted);
}

/// Std-shaped waits follow the clock too: a `thread::sleep` of 2 ms in another thread
/// against a `recv_timeout` of a second.
fn generous_recv_timeout() {
    use interleave_test::sync::mpsc;
    use interleave_test::thread;
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        thread::sleep(2 * MS);
        tx.send(7).unwrap();
    });
    let got = rx.recv_timeout(Duration::from_secs(1)); // generous recv_timeout
    assert_eq!(got, Ok(7), "two milliseconds of work took over a second");
    worker.join().unwrap();
}

#[test]
fn std_timed_waits_end_early_only_on_the_loaded_clock() {
    let line = line_of(SOURCE, "// generous recv_timeout");
    let builder = dfs(SUBSTRATES[0], Reduction::Dpor, None);
    let failure = builder
        .clone()
        .check(generous_recv_timeout)
        .expect_err("the loaded clock times the wait out early");
    let [fired] = failure.early_timers() else {
        panic!("one timed wait ended early: {failure}");
    };
    assert!(!fired.is_timer());
    assert_eq!(fired.api(), "channel recv_timeout");
    assert_eq!(fired.location().line(), line);
    assert_eq!(fired.deadline(), Duration::from_secs(1));
    let report = builder
        .clock(Clock::Paused)
        .check(generous_recv_timeout)
        .unwrap();
    assert!(report.exhausted);
}

/// The attribute chooses the clock for a multi-thread runtime, which `start_paused`
/// cannot: without `clock = "paused"` this test fails (the timeout fires early).
#[interleave(strategy = "dfs", flavor = "multi_thread", clock = "paused")]
async fn the_attribute_pauses_the_clock_of_a_multi_thread_runtime() {
    let work = tokio::spawn(async {
        time::sleep(2 * MS).await;
        7
    });
    let done = time::timeout(Duration::from_secs(1), work).await;
    assert_eq!(done.expect("no early timeout").unwrap(), 7);
}

/// Tokio's `time_timeout::completed_future_past_deadline`: a deadline a second before the
/// first `now` of the execution is an instant, not an overflow.
#[test]
fn a_duration_can_be_taken_from_the_first_instant() {
    let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .check_async(|| async {
            let now = Instant::now();
            let past = now - Duration::from_secs(1);
            assert_eq!(now - past, Duration::from_secs(1));
            assert_eq!(format!("{past:?}"), "Instant(Instant(-1s))");
            assert_eq!(format!("{now:?}"), "Instant(Instant(0ns))");
            let done = time::timeout_at(past, async { 7 }).await;
            assert_eq!(done, Ok(7));
            time::sleep_until(past).await;
            assert_eq!(
                now.elapsed(),
                Duration::ZERO,
                "a past deadline fires at once"
            );
            let std_now = interleave_test::time::Instant::now();
            assert!(std_now.checked_sub(Duration::from_secs(3600)).is_some());
            assert!(std_now.checked_sub(Duration::from_secs(1 << 33)).is_none());
        })
        .unwrap();
    assert!(report.exhausted);
}
