//! Outside a model (a plain `#[test]`), the modelled primitives behave as the originals do
//! on one thread: each OS thread runs them as a one-thread execution of its own, every
//! decision taking option 0. What one thread cannot do (a second thread, a primitive shared
//! with a `std::thread`, a wait only another thread could end) panics saying what happened
//! and what to gate with `cfg(not(interleave))`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use crate::common::panic_message;
use interleave_test::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use interleave_test::sync::{
    Arc, Barrier, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock, TryLockError, mpsc,
};
use interleave_test::thread;

/// What every refusal ends with: what to gate.
const GATE: &str = "gate it with #[cfg(not(interleave))]";

#[test]
fn locks_work_by_hand_as_on_one_thread() {
    let m = Mutex::new(1);
    *m.lock().unwrap() += 1;
    assert_eq!(*m.lock().unwrap(), 2);
    {
        let _held = m.lock().unwrap();
        assert!(matches!(m.try_lock(), Err(TryLockError::WouldBlock)));
    }
    assert!(m.try_lock().is_ok());
    let rw = RwLock::new(vec![1]);
    {
        let a = rw.read().unwrap();
        let b = rw.read().unwrap();
        assert_eq!(a.len() + b.len(), 2);
        assert!(rw.try_write().is_err());
    }
    rw.write().unwrap().push(2);
    assert_eq!(*rw.read().unwrap(), vec![1, 2]);
    assert_eq!(m.into_inner().unwrap(), 2);
}

#[test]
fn a_guard_dropped_by_a_panic_poisons_its_lock_as_in_std() {
    let m = Mutex::new(0);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _g = m.lock().unwrap();
        panic!("boom");
    }));
    assert!(caught.is_err());
    assert!(m.is_poisoned());
    assert_eq!(*m.lock().unwrap_err().into_inner(), 0);
}

#[test]
fn atomics_hold_their_values_outside_a_model() {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let before = COUNT.fetch_add(1, Ordering::SeqCst);
    COUNT.fetch_add(2, Ordering::Relaxed);
    assert_eq!(COUNT.load(Ordering::Acquire), before + 3);
    let local = AtomicU64::new(5);
    local.store(7, Ordering::Release);
    assert_eq!(local.swap(9, Ordering::AcqRel), 7);
    assert_eq!(
        local.compare_exchange(9, 10, Ordering::SeqCst, Ordering::SeqCst),
        Ok(9)
    );
    assert_eq!(
        local.compare_exchange(9, 11, Ordering::SeqCst, Ordering::SeqCst),
        Err(10)
    );
    // A weak exchange takes option 0 outside a model: no spurious failure.
    assert_eq!(
        local.compare_exchange_weak(10, 12, Ordering::SeqCst, Ordering::Relaxed),
        Ok(10)
    );
    assert_eq!(
        local.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v * 2)),
        Ok(12)
    );
    assert_eq!(local.into_inner(), 24);
    let flag = AtomicBool::new(false);
    assert!(!flag.fetch_or(true, Ordering::SeqCst));
    interleave_test::sync::atomic::fence(Ordering::SeqCst);
    assert!(flag.load(Ordering::Relaxed));
}

/// Atomics outside a model are std's own, so a plain test may share one with real threads.
#[test]
fn a_static_atomic_is_shared_with_real_threads() {
    static HITS: AtomicUsize = AtomicUsize::new(0);
    let threads: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(|| HITS.fetch_add(1, Ordering::SeqCst)))
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(HITS.load(Ordering::SeqCst), 4);
}

#[test]
fn channels_once_cells_and_arcs_work_by_hand() {
    let (tx, rx) = mpsc::channel();
    tx.send(1).unwrap();
    tx.clone().send(2).unwrap();
    assert_eq!(rx.recv(), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Empty));
    drop(tx);
    assert_eq!(rx.recv(), Err(mpsc::RecvError));
    let (tx, rx) = mpsc::sync_channel(1);
    tx.send(3).unwrap();
    assert!(matches!(tx.try_send(4), Err(mpsc::TrySendError::Full(4))));
    assert_eq!(rx.recv_timeout(Duration::from_secs(1)), Ok(3));
    // Nobody can send: the wait times out at its deadline, as std's (the thread sleeps).
    let start = std::time::Instant::now();
    assert_eq!(
        rx.recv_timeout(Duration::from_millis(20)),
        Err(mpsc::RecvTimeoutError::Timeout)
    );
    assert!(start.elapsed() >= Duration::from_millis(20));

    let once = Once::new();
    let mut runs = 0;
    once.call_once(|| runs += 1);
    once.call_once(|| runs += 1);
    assert_eq!(runs, 1);
    assert!(once.is_completed());
    let cell = OnceLock::new();
    assert_eq!(*cell.get_or_init(|| 5), 5);
    assert_eq!(cell.set(6), Err(6));
    static LAZY: LazyLock<Vec<u8>> = LazyLock::new(|| vec![1, 2]);
    assert_eq!(LAZY.len(), 2);
    let shared = Arc::new(Mutex::new(0));
    let other = Arc::clone(&shared);
    *other.lock().unwrap() += 1;
    drop(other);
    assert_eq!(Arc::strong_count(&shared), 1);
    assert_eq!(*shared.lock().unwrap(), 1);
}

#[test]
fn choices_and_random_draws_take_the_first_option() {
    use interleave_test::rand::RngExt;
    assert_eq!(interleave_test::choose(2), 0);
    assert_eq!(
        interleave_test::choose(interleave_test::DFS_CHOOSE_LIMIT + 1),
        0
    );
    let mut rng = interleave_test::rand::rng();
    assert_eq!(rng.random::<u64>(), 0);
    assert_eq!(rng.random_range(5..9), 5);
}

#[test]
fn condvars_and_barriers_as_on_one_thread() {
    let pair = (Mutex::new(false), Condvar::new());
    pair.1.notify_one(); // nobody waits: nothing happens, as in std
    let guard = pair.0.lock().unwrap();
    let (guard, timeout) = pair
        .1
        .wait_timeout(guard, Duration::from_millis(10))
        .unwrap();
    assert!(timeout.timed_out(), "nobody notifies: it times out");
    assert!(!*guard);
    drop(guard);
    let barrier = Barrier::new(1);
    assert!(barrier.wait().is_leader());
}

#[test]
fn locking_a_held_mutex_is_a_deadlock_that_says_what_it_waits_for() {
    let m = Mutex::new(0);
    let line = line!() + 3;
    let msg = panic_message(|| {
        let _held = m.lock().unwrap();
        let _again = m.lock();
    });
    assert!(msg.starts_with("deadlock outside a model"), "{msg}");
    assert!(msg.contains("waits to lock Mutex"), "{msg}");
    assert!(msg.contains(&format!("outside.rs:{line}")), "{msg}");
    assert!(msg.contains("held by this same thread"), "{msg}");
    assert!(msg.contains(GATE), "{msg}");
    // The execution goes on: the guard was dropped by the unwinding, which poisoned the
    // lock, as std's would be.
    assert_eq!(*m.lock().unwrap_err().into_inner(), 0);
}

#[test]
fn receiving_on_an_empty_channel_with_a_live_sender_is_a_deadlock() {
    let (tx, rx) = mpsc::channel::<u8>();
    let msg = panic_message(|| {
        let _ = rx.recv();
    });
    assert!(msg.starts_with("deadlock outside a model"), "{msg}");
    assert!(msg.contains("waits to receive on"), "{msg}");
    tx.send(1).unwrap();
    assert_eq!(rx.recv(), Ok(1));
}

#[test]
fn spawning_a_model_thread_outside_a_model_is_refused() {
    let msg = panic_message(|| drop(thread::spawn(|| ())));
    assert!(msg.contains("was started outside a model"), "{msg}");
    assert!(msg.contains(GATE), "{msg}");
    // Nothing is left behind: the thread goes on using primitives.
    let m = Mutex::new(1);
    assert_eq!(*m.lock().unwrap(), 1);
}

#[test]
fn a_lock_shared_with_a_std_thread_is_refused_there() {
    let m = std::sync::Arc::new(Mutex::new(0));
    *m.lock().unwrap() += 1;
    let other = std::sync::Arc::clone(&m);
    let msg = std::thread::spawn(move || panic_message(|| drop(other.lock())))
        .join()
        .unwrap();
    assert!(
        msg.contains("used outside a model on two OS threads"),
        "{msg}"
    );
    assert!(msg.contains(GATE), "{msg}");
    assert_eq!(*m.lock().unwrap(), 1);
}

/// A primitive that outlived its model goes on outside it, as the original would.
#[test]
fn a_lock_that_outlived_its_model_goes_on_outside() {
    let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = std::sync::Arc::clone(&kept);
    interleave_test::Builder::new()
        .iterations(1)
        .check(move || {
            let m = std::sync::Arc::new(Mutex::new(3));
            *m.lock().unwrap() += 1;
            *keep.lock().unwrap() = Some(m);
        })
        .unwrap();
    let m = kept.lock().unwrap().take().unwrap();
    assert_eq!(*m.lock().unwrap(), 4);
}

/// Set to run [`deadlock_while_unwinding_child`] in a child process.
const CHILD: &str = "INTERLEAVE_TEST_OUTSIDE_UNWIND_CHILD";

/// Locks its mutex when dropped.
struct LocksOnDrop<'a>(&'a Mutex<()>);

impl Drop for LocksOnDrop<'_> {
    fn drop(&mut self) {
        let _again = self.0.lock(); // LOCKS_ON_DROP
    }
}

/// Not a test on its own: the child process of
/// [`a_deadlock_in_a_destructor_while_unwinding_says_so_before_the_abort`]. A destructor
/// run by a panic's unwinding locks a mutex the thread still holds: std would hang for
/// ever; here the process aborts (a panic there would abort it anyway), saying why.
#[test]
fn deadlock_while_unwinding_child() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let m = Mutex::new(());
    let _held = m.lock().unwrap();
    let _locks = LocksOnDrop(&m);
    panic!("the test's own panic");
}

#[test]
fn a_deadlock_in_a_destructor_while_unwinding_says_so_before_the_abort() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "outside::deadlock_while_unwinding_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("the test's own panic"), "{stderr}");
    assert!(
        stderr.contains("while the thread unwinds from a panic, deadlock outside a model"),
        "{stderr}"
    );
    let line = include_str!("outside.rs")
        .lines()
        .position(|l| l.ends_with("// LOCKS_ON_DROP"))
        .unwrap()
        + 1;
    assert!(stderr.contains(&format!("outside.rs:{line}")), "{stderr}");
    assert!(stderr.contains("waits to lock Mutex"), "{stderr}");
}
