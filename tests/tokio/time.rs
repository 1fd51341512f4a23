//! `tokio::time` on the virtual clock: sleeps end exactly at their deadline, timeouts race
//! the work they bound (both outcomes explored), intervals tick with each
//! `MissedTickBehavior`, and paused time moves only when every task is idle.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicBool, Ordering};
use interleave_test::{Builder, Reduction, Substrate};
use interleave_test_tokio::time::{self, Instant, MissedTickBehavior};
use interleave_test_tokio::{self as tokio, runtime};

use crate::common::{REDUCTIONS, SUBSTRATES, dfs};

const MS: Duration = Duration::from_millis(1);

/// Two sleeps of 10 and 30 ms, on the main task and a spawned one: the times each sees
/// when it ends, over every execution.
fn two_sleeps(paused: bool, substrate: interleave_test::Substrate) -> BTreeSet<(u128, u128)> {
    let seen = StdMutex::new(BTreeSet::new());
    dfs(substrate, Reduction::Dpor, None)
        .check_async(|| async {
            if paused {
                time::pause();
            }
            let start = Instant::now();
            let other = tokio::spawn(async move {
                time::sleep_until(start + 30 * MS).await;
                Instant::now()
            });
            time::sleep(10 * MS).await;
            let mine = start.elapsed().as_millis();
            let theirs = (other.await.unwrap() - start).as_millis();
            seen.lock().unwrap().insert((mine, theirs));
        })
        .unwrap();
    seen.into_inner().unwrap()
}

#[test]
fn a_sleep_never_ends_before_its_deadline_and_exactly_at_it_under_paused_time() {
    for substrate in SUBSTRATES {
        // Unpaused, the 30 ms timer may fire while the main task could still act: the clock
        // then passes the 10 ms deadline, whose sleep ends late, as on a loaded runtime.
        let late = BTreeSet::from([(10, 30), (30, 30)]);
        assert_eq!(two_sleeps(false, substrate), late, "{substrate:?}");
        assert_eq!(
            two_sleeps(true, substrate),
            BTreeSet::from([(10, 30)]),
            "{substrate:?}"
        );
    }
}

/// The outcome of a `timeout` of 5 ms around a task that does no waiting, and the virtual
/// time it returned at.
fn timeout_outcomes(builder: Builder) -> (BTreeSet<(bool, Duration)>, u64) {
    let seen = StdMutex::new(BTreeSet::new());
    let report = builder
        .check_async(|| async {
            let start = Instant::now();
            let done = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&done);
            let task = tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
            let result = time::timeout(5 * MS, task).await;
            // Elapsed exactly when the task had not finished by the deadline, and then the
            // clock is at the deadline, never before it.
            let elapsed = start.elapsed();
            match &result {
                Ok(_) => assert_eq!(elapsed, Duration::ZERO),
                Err(_) => assert_eq!(elapsed, 5 * MS),
            }
            seen.lock().unwrap().insert((result.is_ok(), elapsed));
        })
        .unwrap();
    (seen.into_inner().unwrap(), report.executions)
}

#[test]
fn a_timeout_races_the_work_it_bounds_and_both_outcomes_are_explored() {
    for substrate in SUBSTRATES {
        for reduction in REDUCTIONS {
            let (seen, _) = timeout_outcomes(dfs(substrate, reduction, None));
            let both = BTreeSet::from([(false, 5 * MS), (true, Duration::ZERO)]);
            assert_eq!(seen, both, "{substrate:?}, {reduction:?}");
        }
    }
}

#[test]
fn paused_time_fires_a_timer_only_when_every_task_is_idle() {
    for substrate in SUBSTRATES {
        let seen = StdMutex::new(BTreeSet::new());
        dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let rt = runtime::Builder::new_multi_thread()
                    .start_paused(true)
                    .build()
                    .unwrap();
                rt.block_on(async {
                    let task = tokio::spawn(async { 7 });
                    let result = time::timeout(5 * MS, task).await;
                    seen.lock().unwrap().insert(result.is_ok());
                });
            })
            .unwrap();
        assert_eq!(
            seen.into_inner().unwrap(),
            BTreeSet::from([true]),
            "{substrate:?}"
        );
    }
}

#[test]
fn advance_fires_the_timers_it_reaches_and_no_others() {
    for substrate in SUBSTRATES {
        advance_on(substrate);
    }
}

fn advance_on(substrate: Substrate) {
    dfs(substrate, Reduction::Dpor, None)
        .check_async(|| async {
            time::pause();
            let start = Instant::now();
            let sleeper = tokio::spawn(async move {
                time::sleep_until(start + 10 * MS).await;
                Instant::now() - start
            });
            time::advance(4 * MS).await;
            assert!(!sleeper.is_finished());
            time::advance(6 * MS).await;
            assert_eq!(Instant::now() - start, 10 * MS);
            assert_eq!(sleeper.await.unwrap(), 10 * MS);
        })
        .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
}

/// The instants (ms from the start) of the first `n` ticks of an interval of 10 ms whose
/// holder works 25 ms (a sleep) after the first tick.
fn ticks(behavior: MissedTickBehavior, substrate: Substrate) -> Vec<u64> {
    let got = StdMutex::new(Vec::new());
    Builder::new()
        .iterations(1)
        .substrate(substrate)
        .check_async(|| async {
            let start = Instant::now();
            let mut every = time::interval(10 * MS);
            every.set_missed_tick_behavior(behavior);
            let mut seen = Vec::new();
            for n in 0..5 {
                let due = every.tick().await;
                seen.push((
                    (due - start).as_millis() as u64,
                    start.elapsed().as_millis() as u64,
                ));
                if n == 0 {
                    time::sleep(25 * MS).await;
                }
            }
            *got.lock().unwrap() = seen.into_iter().map(|(due, _)| due).collect();
        })
        .unwrap();
    got.into_inner().unwrap()
}

#[test]
fn interval_ticks_follow_each_missed_tick_behavior() {
    // Late at 25 ms: Burst catches up with 10 and 20 at once, then 30, 40; Delay ticks at
    // 25 (its due time was 10) and then every 10 from 25; Skip drops 10 and 20's lateness
    // and keeps the original grid from 30.
    for substrate in SUBSTRATES {
        let ticks = |behavior| ticks(behavior, substrate);
        assert_eq!(
            ticks(MissedTickBehavior::Burst),
            [0, 10, 20, 30, 40],
            "{substrate:?}"
        );
        assert_eq!(
            ticks(MissedTickBehavior::Delay),
            [0, 10, 35, 45, 55],
            "{substrate:?}"
        );
        assert_eq!(
            ticks(MissedTickBehavior::Skip),
            [0, 10, 30, 40, 50],
            "{substrate:?}"
        );
    }
}

#[test]
fn an_interval_tick_up_to_5ms_late_is_not_missed() {
    // As Tokio's `Interval`: a tick polled at most 5 ms after it was due keeps the grid;
    // only a later one is missed (here under `Delay`, which then ticks a period after
    // now). Ticks every 10 ms: 0; 10 seen at 15 (5 ms late, not missed: next 20); 20 seen
    // at 20, then 17 ms of work; 30 seen at 37 (7 ms late, missed: next 47); 47.
    for substrate in SUBSTRATES {
        let got = StdMutex::new(Vec::new());
        Builder::new()
            .iterations(1)
            .substrate(substrate)
            .check_async(|| async {
                let start = Instant::now();
                let mut every = time::interval(10 * MS);
                every.set_missed_tick_behavior(MissedTickBehavior::Delay);
                let mut seen = Vec::new();
                for work in [15, 0, 17, 0, 0] {
                    seen.push((every.tick().await - start).as_millis() as u64);
                    time::sleep(work * MS).await;
                }
                *got.lock().unwrap() = seen;
            })
            .unwrap();
        assert_eq!(
            got.into_inner().unwrap(),
            [0, 10, 20, 30, 47],
            "{substrate:?}"
        );
    }
}

#[test]
fn a_detached_interval_loop_is_dropped_at_the_end_not_fired_forever() {
    for substrate in SUBSTRATES {
        let report = dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                let _ticker = tokio::spawn(async {
                    let mut every = time::interval(MS);
                    loop {
                        every.tick().await;
                    }
                });
            })
            .unwrap();
        assert!(report.exhausted, "{substrate:?}");
    }
}

/// A task that sleeps in a loop for ever, awaited by the main task, is reported as a
/// livelock at `max_steps`, by every strategy: each of its waits blocks with no decision
/// before it (its timer is not due yet) but still counts as a step, so a round takes two.
#[test]
fn a_task_that_sleeps_in_a_loop_for_ever_is_a_livelock_not_a_hang() {
    static ROUNDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let model = || async {
        let sleeper = tokio::spawn(async {
            loop {
                time::sleep(MS).await;
                ROUNDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        sleeper.await.unwrap();
    };
    for substrate in SUBSTRATES {
        let builders = [
            dfs(substrate, Reduction::Dpor, None),
            Builder::new().substrate(substrate).seed(3).iterations(5),
        ];
        for builder in builders {
            let failure = builder
                .max_steps(500)
                .check_async(model)
                .expect_err("an endless loop of sleeps");
            assert_eq!(
                failure.kind(),
                interleave_test::FailureKind::Livelock,
                "{substrate:?}, seed 3: {failure}"
            );
            assert_eq!(failure.thread().map(|t| t.id()), Some(1), "{failure}");
            // Each round takes at least two steps: its wait and the sleep's timer. The
            // sleeper runs alone (main waits for it), so its steps count a tenth each
            // towards `max_steps`: at most 5,000 of them.
            let rounds = ROUNDS.swap(0, std::sync::atomic::Ordering::Relaxed);
            assert!(rounds * 2 <= 5_000, "{rounds} rounds in 5,000 steps");
        }
    }
}

/// As Tokio's: an interval of `Duration::MAX`, reset by any means, sets a far-future
/// deadline rather than overflow the instant (instants are far from their origin, so
/// adding the largest duration overflows).
#[test]
fn an_interval_of_the_largest_period_never_overflows() {
    interleave_test::check_async(|| async {
        let start = Instant::now();
        let mut ticks = time::interval_at(start, Duration::MAX);
        assert_eq!(ticks.tick().await, start, "the first tick is at its start");
        ticks.reset();
        ticks.reset_after(Duration::MAX);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticks.reset_immediately();
        assert_eq!(ticks.tick().await, Instant::now());
        assert!(
            time::timeout(Duration::from_secs(1), ticks.tick())
                .await
                .is_err(),
            "the next tick is in the far future"
        );
    })
    .unwrap();
}
