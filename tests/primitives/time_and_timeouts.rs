//! Virtual time: sleeps and timed waits end only when nothing else can happen, at the
//! earliest deadline, and never wait in real time.

use std::time::Duration;

use interleave_test::sync::{Arc, Condvar, Mutex};
use interleave_test::time::Instant;
use interleave_test::{Builder, FailureKind, StrategyKind, thread};

#[test]
fn sleep_advances_the_virtual_clock_exactly() {
    let real = std::time::Instant::now();
    Builder::new()
        .seed(1)
        .iterations(50)
        .check(|| {
            let start = Instant::now();
            thread::sleep(Duration::from_secs(3600));
            assert_eq!(start.elapsed(), Duration::from_secs(3600));
        })
        .unwrap();
    assert!(
        real.elapsed() < Duration::from_secs(60),
        "50 virtual hours took real time"
    );
}

/// A sleep ends no earlier than its deadline, but which of two sleepers goes on first is
/// up to the scheduler: a deadline may pass while another thread could still act (the
/// clock jumps to it), so both orders are explored.
#[test]
fn sleeps_end_no_earlier_than_their_deadlines_in_either_order() {
    let orders = std::sync::Mutex::new(std::collections::BTreeSet::new());
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check(|| {
            let order = Arc::new(Mutex::new(Vec::new()));
            let spawn_sleeper = |name: &'static str, ms: u64| {
                let order = Arc::clone(&order);
                thread::spawn(move || {
                    let start = Instant::now();
                    thread::sleep(Duration::from_millis(ms));
                    assert!(start.elapsed() >= Duration::from_millis(ms));
                    order.lock().unwrap().push(name);
                })
            };
            let slow = spawn_sleeper("slow", 20);
            let fast = spawn_sleeper("fast", 10);
            slow.join().unwrap();
            fast.join().unwrap();
            let order = order.lock().unwrap().clone();
            orders.lock().unwrap().insert(order);
        })
        .unwrap();
    let orders: Vec<Vec<&str>> = orders.into_inner().unwrap().into_iter().collect();
    assert_eq!(orders, [["fast", "slow"], ["slow", "fast"]]);
}

/// The consumer waits up to 50 ms for a value and treats a timeout as an error; the
/// producer needs exactly 50 ms. Both deadlines fire together, and whether the consumer
/// sees the value depends on which of the two runs first after that.
fn impatient_consumer() {
    let pair = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let pair2 = Arc::clone(&pair);
    let producer = thread::Builder::new()
        .name("producer".into())
        .spawn(move || {
            thread::sleep(Duration::from_millis(50));
            let (slot, cv) = &*pair2;
            *slot.lock().unwrap() = Some(7);
            cv.notify_one();
        })
        .unwrap();
    let (slot, cv) = &*pair;
    let (guard, timeout) = cv
        .wait_timeout_while(slot.lock().unwrap(), Duration::from_millis(50), |v| {
            v.is_none()
        })
        .unwrap();
    assert!(!timeout.timed_out(), "gave up waiting for the producer");
    assert_eq!(*guard, Some(7));
    drop(guard);
    producer.join().unwrap();
}

#[test]
fn condvar_timeout_bug_is_found_at_the_virtual_deadline() {
    let failure = Builder::new()
        .seed(8)
        .iterations(1000)
        .check(impatient_consumer)
        .expect_err("found");
    assert_eq!(failure.kind(), FailureKind::Panic, "seed 8: {failure}");
    assert!(
        failure.iteration() > 0 || failure.schedule().decisions().len() > 1,
        "{failure}"
    );
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
    assert!(
        failure.message().contains("gave up waiting"),
        "{}",
        failure.message()
    );
}

/// `wait_timeout_while` returns as soon as a notification makes the condition false, or
/// times out after its duration (possibly while the notifier could still have run); a
/// `wait_timeout` that nobody notifies times out after its duration. Spurious wake-ups are
/// off so that the second wait can only time out.
#[test]
fn wait_timeout_returns_early_when_notified_and_times_out_otherwise() {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .spurious_wakeups(false)
        .check(|| {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let pair2 = Arc::clone(&pair);
            let notifier = thread::spawn(move || {
                let (flag, cv) = &*pair2;
                *flag.lock().unwrap() = true;
                cv.notify_one();
            });
            let (flag, cv) = &*pair;
            let start = Instant::now();
            let (guard, result) = cv
                .wait_timeout_while(flag.lock().unwrap(), Duration::from_secs(5), |f| !*f)
                .unwrap();
            if result.timed_out() {
                assert!(!*guard);
                assert_eq!(start.elapsed(), Duration::from_secs(5));
            } else {
                // Notified at once, or timed out with the flag raised before the relock.
                assert!(*guard);
                let waited = start.elapsed();
                assert!(waited == Duration::ZERO || waited == Duration::from_secs(5));
            }
            seen.lock().unwrap().insert(result.timed_out());
            drop(guard);
            notifier.join().unwrap();
            let before = start.elapsed();
            let (guard, result) = cv
                .wait_timeout(flag.lock().unwrap(), Duration::from_millis(30))
                .unwrap();
            assert!(result.timed_out() && *guard);
            assert_eq!(start.elapsed(), before + Duration::from_millis(30));
        })
        .unwrap();
    assert_eq!(
        seen.into_inner().unwrap().len(),
        2,
        "notified, and timed out"
    );
}

#[test]
fn park_timeout_and_unpark() {
    // Without spurious wake-ups: `park` returns only for a token, `park_timeout` also at
    // its deadline.
    Builder::new()
        .seed(10)
        .iterations(1000)
        .spurious_wakeups(false)
        .check(|| {
            let start = Instant::now();
            thread::park_timeout(Duration::from_millis(5));
            assert_eq!(start.elapsed(), Duration::from_millis(5));
            let main = thread::current();
            let t = thread::spawn(move || main.unpark());
            // Whether unpark comes before or after park, park returns without a timeout.
            thread::park();
            t.join().unwrap();
            assert_eq!(start.elapsed(), Duration::from_millis(5));
        })
        .unwrap();
}

/// Outside a model time is real, as std's: a sleep, or a timed wait nobody ends, takes its
/// time, and the thread's clock moves by exactly the time waited. (Before, `Instant::now`
/// panicked there.)
#[test]
fn outside_a_model_time_is_real() {
    let (start, std_start) = (Instant::now(), std::time::Instant::now());
    thread::sleep(Duration::from_millis(20));
    assert_eq!(start.elapsed(), Duration::from_millis(20));
    let pair = (Mutex::new(()), Condvar::new());
    let guard = pair.0.lock().unwrap();
    let (_guard, waited) = pair
        .1
        .wait_timeout(guard, Duration::from_millis(5))
        .unwrap();
    assert!(waited.timed_out());
    assert_eq!(start.elapsed(), Duration::from_millis(25));
    assert!(std_start.elapsed() >= Duration::from_millis(25));
}

#[test]
fn the_timeout_race_also_has_passing_schedules() {
    // Same model: some schedules pass, so the failure above is a real race, not a certainty.
    let passing = (0..40u64)
        .filter(|&seed| {
            Builder::new()
                .seed(seed)
                .iterations(1)
                .check(impatient_consumer)
                .is_ok()
        })
        .count();
    assert!(
        (1..40).contains(&passing),
        "{passing} of 40 single executions passed"
    );
}

/// A loop that polls the clock against a deadline, yielding in between, ends under every
/// strategy: each spin in a row moves the virtual clock twice as far as the one before
/// (1 µs, 2 µs, ...), so ten seconds pass in 24 spins.
#[test]
fn polling_the_clock_in_a_yield_loop_ends() {
    let strategies = [
        StrategyKind::Random,
        StrategyKind::Pct { depth: 3 },
        StrategyKind::Dfs {
            max_preemptions: None,
        },
    ];
    for strategy in strategies {
        let report = Builder::new()
            .strategy(strategy)
            .seed(3)
            .iterations(200)
            .check(|| {
                let other = thread::spawn(|| thread::sleep(Duration::from_millis(1)));
                let start = Instant::now();
                let deadline = start + Duration::from_secs(10);
                let mut spins = 0;
                while Instant::now() < deadline {
                    thread::yield_now();
                    spins += 1;
                }
                assert!(spins <= 24, "{spins} spins");
                other.join().unwrap();
            })
            .unwrap_or_else(|f| panic!("{strategy:?}: {f}"));
        assert!(report.executions > 0);
    }
}

/// A duration taken from the first `Instant::now` of an execution is an instant before the
/// start, as with a real `Instant` (which is far from its origin), not an overflow panic;
/// times since the start are unchanged, and `Debug` shows them (negative before it). The
/// same holds outside a model, on the OS thread's own clock.
#[test]
fn a_duration_can_be_subtracted_from_the_first_instant() {
    let check = || {
        let start = Instant::now();
        let before = start - Duration::from_secs(1);
        assert_eq!(start.duration_since(before), Duration::from_secs(1));
        assert_eq!(before.checked_duration_since(start), None);
        assert_eq!(format!("{before:?}"), "Instant(-1s)");
        thread::sleep(Duration::from_millis(5));
        assert_eq!(
            format!("{:?}", Instant::now()),
            format!("{:?}", start + Duration::from_millis(5))
        );
        assert_eq!(start.elapsed(), Duration::from_millis(5));
        assert!(
            start
                .checked_sub(Duration::from_secs(86_400 * 365))
                .is_some()
        );
        assert_eq!(start.checked_sub(Duration::from_secs(1 << 33)), None);
    };
    Builder::new().seed(1).iterations(5).check(check).unwrap();
    check();
}
