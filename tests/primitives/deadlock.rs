//! Deadlocks come back as `FailureKind::Deadlock` naming every blocked thread, what it waits
//! for, who holds it and where.

use std::sync::Mutex as StdMutex;

use interleave_test::sync::{Arc, Condvar, Mutex};
use interleave_test::{Builder, FailureKind, thread};

/// Lines of the lock calls of the ABBA model, recorded at run time by `line!()`.
static LINES: StdMutex<[u32; 4]> = StdMutex::new([0; 4]);

fn abba() {
    let a = Arc::new(Mutex::new(()));
    let b = Arc::new(Mutex::new(()));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::Builder::new()
        .name("ab".into())
        .spawn(move || {
            LINES.lock().unwrap()[0] = line!() + 1;
            let _a = a2.lock().unwrap();
            LINES.lock().unwrap()[1] = line!() + 1;
            let _b = b2.lock().unwrap();
        })
        .unwrap();
    {
        LINES.lock().unwrap()[2] = line!() + 1;
        let _b = b.lock().unwrap();
        LINES.lock().unwrap()[3] = line!() + 1;
        let _a = a.lock().unwrap();
    }
    t.join().unwrap();
}

#[test]
fn abba_deadlock_names_both_threads_holders_and_places() {
    let seed = 11;
    let failure = Builder::new()
        .seed(seed)
        .iterations(1000)
        .check(abba)
        .expect_err("seed 11 finds ABBA");
    let [ab_a, ab_b, main_b, main_a] = *LINES.lock().unwrap();
    assert_eq!(
        failure.kind(),
        FailureKind::Deadlock,
        "seed {seed}: {failure}"
    );
    let threads = failure.threads();
    assert_eq!(threads.len(), 2, "{failure}");
    let main = threads.iter().find(|t| t.thread().id() == 0).unwrap();
    let ab = threads
        .iter()
        .find(|t| t.thread().name() == Some("ab"))
        .unwrap();
    // main holds b (taken at main_b) and waits for a at main_a; "ab" holds a and waits for b.
    assert_eq!(main.location().unwrap().line(), main_a);
    assert_eq!(ab.location().unwrap().line(), ab_b);
    assert_eq!(main.held_by().len(), 1);
    assert_eq!(main.held_by()[0].thread().name(), Some("ab"));
    assert_eq!(main.held_by()[0].location().line(), ab_a);
    assert_eq!(ab.held_by()[0].thread().id(), 0);
    assert_eq!(ab.held_by()[0].location().line(), main_b);
    assert!(
        main.state().starts_with("waits to lock Mutex #"),
        "{}",
        main.state()
    );
    assert_eq!(main.location().unwrap().file(), file!());
    let text = failure.to_string();
    assert!(text.contains("every live thread is blocked"), "{text}");
    assert!(text.contains("held by thread 'ab' (#1)"), "{text}");
}

#[test]
fn relocking_a_held_mutex_is_a_deadlock_naming_both_places() {
    let failure = Builder::new()
        .seed(1)
        .iterations(1)
        .check(|| {
            let m = Mutex::new(5);
            let _first = m.lock().unwrap();
            let _second = m.lock().unwrap();
        })
        .expect_err("relocking deadlocks in every execution");
    let first_line = line!() - 4;
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let [only] = failure.threads() else {
        panic!("one thread: {failure}")
    };
    assert_eq!(only.thread().name(), Some("main"));
    assert_eq!(only.location().unwrap().line(), first_line + 1);
    assert_eq!(only.held_by()[0].thread().id(), 0);
    assert_eq!(only.held_by()[0].location().line(), first_line);
    assert!(
        failure.to_string().contains("held by this same thread"),
        "{failure}"
    );
}

/// The waiter checks the flag once, without a loop, and then waits: if the notification
/// comes between the check and the wait, it is lost and the waiter sleeps forever.
fn lost_wakeup() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let pair2 = Arc::clone(&pair);
    let waiter = thread::Builder::new()
        .name("waiter".into())
        .spawn(move || {
            let (flag, cv) = &*pair2;
            let ready = *flag.lock().unwrap();
            if !ready {
                let guard = flag.lock().unwrap();
                let _guard = cv.wait(guard).unwrap();
            }
        })
        .unwrap();
    let (flag, cv) = &*pair;
    *flag.lock().unwrap() = true;
    cv.notify_one();
    waiter.join().unwrap();
}

#[test]
fn lost_wakeup_is_found_as_a_deadlock_on_the_condvar() {
    let seed = 5;
    let failure = Builder::new()
        .seed(seed)
        .iterations(1000)
        .check(lost_wakeup)
        .expect_err("found");
    assert_eq!(
        failure.kind(),
        FailureKind::Deadlock,
        "seed {seed}: {failure}"
    );
    let waiter = failure
        .threads()
        .iter()
        .find(|t| t.thread().name() == Some("waiter"))
        .unwrap();
    assert!(
        waiter
            .state()
            .starts_with("waits to be notified on Condvar #"),
        "{}",
        waiter.state()
    );
    let main = failure
        .threads()
        .iter()
        .find(|t| t.thread().id() == 0)
        .unwrap();
    assert!(
        main.state().contains("join thread 'waiter' (#1)"),
        "{}",
        main.state()
    );
    assert_eq!(main.held_by()[0].thread().name(), Some("waiter"));
    // The joined thread holds nothing: the report says where it is, not "held by".
    assert!(main.held_by()[0].is_joined_thread());
    let shown = main.to_string();
    let at = waiter.location().unwrap();
    let expected = format!("\n      thread 'waiter' (#1) has not finished; it is at {at}");
    assert!(shown.ends_with(&expected), "{shown}");
    assert!(!shown.contains("taken at"), "{shown}");
}

#[test]
fn correct_condvar_handshake_passes_10000_executions() {
    let report = Builder::new()
        .seed(3)
        .iterations(10_000)
        .check(|| {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let pair2 = Arc::clone(&pair);
            let waiter = thread::spawn(move || {
                let (flag, cv) = &*pair2;
                let _g = cv
                    .wait_while(flag.lock().unwrap(), |ready| !*ready)
                    .unwrap();
            });
            let (flag, cv) = &*pair;
            *flag.lock().unwrap() = true;
            cv.notify_all();
            waiter.join().unwrap();
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
}
