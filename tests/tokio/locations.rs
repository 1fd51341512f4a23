//! Reports place each Tokio operation at the program's call (`lock().await`,
//! `send(v).await`, `notified().await`, a guard's or a sender's drop at its lock or its
//! creation), not inside this crate: every decision of a schedule names a line of this
//! file. Their last decisions name the method the program called there (`tokio mpsc
//! send`), not the model lock that keeps the primitive's state.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use interleave_test::{Builder, Schedule, StrategyKind};
use interleave_test_tokio::sync::{
    Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, broadcast, mpsc, oneshot, watch,
};
use interleave_test_tokio::{self as tokio, task::JoinSet};

use crate::common::SUBSTRATES;

/// The state the tasks share.
struct Shared {
    mutex: Mutex<u32>,
    rwlock: RwLock<u32>,
    semaphore: Semaphore,
    notify: Notify,
    barrier: Barrier,
    cell: OnceCell<u32>,
}

/// One task's turn at every primitive; `i` tells the tasks apart. It panics after its
/// `stop`th operation (none: `usize::MAX`), so that a report's last decisions show it.
async fn touch_everything(
    s: Arc<Shared>,
    i: u32,
    tx: mpsc::Sender<u32>,
    bx: broadcast::Sender<u32>,
    stop: usize,
) {
    let done = |n: usize| assert!(n != stop, "stopped after operation {n}");
    *s.mutex.lock().await += i;
    done(1);
    *s.rwlock.write().await += i;
    done(2);
    drop(s.rwlock.read().await);
    done(3);
    drop(s.semaphore.acquire().await.unwrap());
    done(4);
    s.notify.notify_one();
    done(5);
    s.cell.get_or_init(|| async { i }).await;
    done(6);
    tx.send(i).await.unwrap();
    done(7);
    let _ = bx.send(i);
    done(8);
    s.barrier.wait().await;
}

async fn model() {
    model_until(usize::MAX).await;
}

/// The model, whose tasks stop after their `stop`th operation.
async fn model_until(stop: usize) {
    let shared = Arc::new(Shared {
        mutex: Mutex::new(0),
        rwlock: RwLock::new(0),
        semaphore: Semaphore::new(1),
        notify: Notify::new(),
        barrier: Barrier::new(3),
        cell: OnceCell::new(),
    });
    let (tx, mut rx) = mpsc::channel(1);
    let (bx, mut brx) = broadcast::channel(4);
    let (wtx, mut wrx) = watch::channel(0);
    let (otx, orx) = oneshot::channel();
    let mut set = JoinSet::new();
    for i in 1..=2 {
        set.spawn(touch_everything(
            Arc::clone(&shared),
            i,
            tx.clone(),
            bx.clone(),
            stop,
        ));
    }
    set.spawn(async move {
        wtx.send(1).unwrap();
        otx.send(7).unwrap();
    });
    drop((tx, bx));
    shared.notify.notified().await;
    assert_eq!(orx.await, Ok(7));
    let _ = wrx.changed().await;
    let (a, b) = (rx.recv().await, rx.recv().await);
    assert_eq!(a.zip(b).map(|(a, b)| a + b), Some(3));
    let _ = brx.recv().await;
    shared.barrier.wait().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    while set.join_next().await.is_some() {}
    panic!("the end of the model");
}

#[test]
fn every_decision_of_a_tokio_model_is_placed_in_the_program() {
    for substrate in SUBSTRATES {
        let mut lines = BTreeSet::new();
        let mut tokio_ops = 0;
        for seed in 1..=5 {
            let failure = Builder::new()
                .substrate(substrate)
                .strategy(StrategyKind::Random)
                .seed(seed)
                .iterations(1)
                .check_async(model)
                .expect_err("the model panics at its end");
            assert_eq!(failure.message(), "the end of the model", "seed {seed}");
            // Reports and the schedule name the method, not the model lock under it.
            for step in failure.recent() {
                assert!(!step.op().starts_with("mutex"), "seed {seed}: {step:?}");
            }
            tokio_ops += failure
                .recent()
                .iter()
                .filter(|s| s.op().starts_with("tokio "))
                .count();
            let decisions = failure.schedule().decisions();
            assert!(decisions.iter().all(|d| !d.op().starts_with("mutex")));
            assert!(decisions.iter().any(|d| d.op().starts_with("tokio ")));
            for d in failure.schedule().decisions() {
                let (file, line) = d
                    .location()
                    .rsplit_once(':')
                    .unwrap()
                    .0
                    .rsplit_once(':')
                    .unwrap();
                assert_eq!(file, file!(), "seed {seed}, {substrate:?}: {d:?}");
                lines.insert(line.parse::<u32>().unwrap());
            }
        }
        // The decisions reach most of the model: its lines, not a few inside a helper.
        assert!(lines.len() >= 15, "{substrate:?}: only lines {lines:?}");
        assert!(
            tokio_ops >= 20,
            "{substrate:?}: {tokio_ops} steps named after a primitive"
        );
    }
}

/// A schedule written before Tokio's operations had names of their own recorded each as
/// `mutex lock` (the model lock under it): it still replays, to the same failure.
#[test]
fn a_schedule_that_records_tokio_steps_as_mutex_locks_still_replays() {
    for seed in 1..=3 {
        let failure = Builder::new()
            .strategy(StrategyKind::Random)
            .seed(seed)
            .iterations(1)
            .check_async(model)
            .expect_err("the model panics at its end");
        let json = failure.schedule().to_json();
        let renamed = as_earlier_versions_wrote_it(&json);
        assert_ne!(renamed, json, "seed {seed}: no Tokio step to rename");
        let old = Schedule::from_json(&renamed).expect("still a schedule");
        assert!(old.decisions().iter().any(|d| d.op() == "mutex lock"));
        let again = Builder::new()
            .replay_async(model, &old)
            .expect_err("replays to the panic");
        assert_eq!(again.message(), failure.message(), "seed {seed}");
        assert_eq!(again.schedule().decisions().len(), old.decisions().len());
    }
}

/// `json` with every `"op": "tokio ..."` of a thread's decision written `"op": "mutex
/// lock"`, as earlier versions wrote them.
fn as_earlier_versions_wrote_it(json: &str) -> String {
    let mut out = String::new();
    let mut rest = json;
    while let Some(at) = rest.find("\"op\": \"tokio ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "\"op\": \"".len()..];
        let end = after.find('"').expect("a closing quote");
        out.push_str("\"op\": \"mutex lock\"");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// What a report may call a Tokio operation, and what the line it places it at must call:
/// the method, or, for a guard's drop, the lock call, and for a channel end's drop or
/// clone, the channel's creation or the clone (a oneshot receiver is awaited by
/// `IntoFuture`, which cannot see its caller, so its polls are at its creation too).
const CALLS: &[(&str, &[&str])] = &[
    ("tokio Mutex lock", &[".lock()"]),
    ("tokio Mutex unlock", &[".lock()"]),
    ("tokio RwLock write", &[".write()"]),
    ("tokio RwLock write unlock", &[".write()"]),
    ("tokio RwLock read", &[".read()"]),
    ("tokio RwLock read unlock", &[".read()"]),
    ("tokio Semaphore acquire", &[".acquire()"]),
    ("tokio Semaphore permit drop", &[".acquire()"]),
    ("tokio Notify notify_one", &[".notify_one()"]),
    ("tokio Notify notified", &[".notified()"]),
    ("tokio OnceCell get_or_init", &[".get_or_init("]),
    (
        "tokio OnceCell initialized by get_or_init",
        &[".get_or_init("],
    ),
    ("tokio mpsc send", &["tx.send("]),
    ("tokio mpsc recv", &["rx.recv()"]),
    ("tokio mpsc Sender drop", &["mpsc::channel(", "tx.clone()"]),
    ("tokio mpsc Receiver drop", &["mpsc::channel("]),
    ("tokio mpsc Sender clone", &["tx.clone()"]),
    ("tokio broadcast send", &["bx.send("]),
    ("tokio broadcast recv", &["brx.recv()"]),
    (
        "tokio broadcast Sender drop",
        &["broadcast::channel(", "bx.clone()"],
    ),
    ("tokio broadcast Receiver drop", &["broadcast::channel("]),
    ("tokio broadcast Sender clone", &["bx.clone()"]),
    ("tokio watch send", &["wtx.send("]),
    ("tokio watch changed", &["wrx.changed()"]),
    ("tokio watch Sender drop", &["watch::channel("]),
    ("tokio watch Receiver drop", &["watch::channel("]),
    ("tokio oneshot send", &["otx.send("]),
    ("tokio oneshot recv", &["oneshot::channel("]),
    ("tokio oneshot Sender drop", &["oneshot::channel("]),
    ("tokio oneshot Receiver drop", &["oneshot::channel("]),
    ("tokio Barrier wait", &[".wait()"]),
];

#[test]
fn reports_name_the_method_each_tokio_decision_calls() {
    let source: Vec<&str> = include_str!("locations.rs").lines().collect();
    let mut seen = BTreeSet::new();
    for (seed, stop) in (1..=40).zip((1..=9).cycle()) {
        let failure = Builder::new()
            .strategy(StrategyKind::Random)
            .seed(seed)
            .iterations(1)
            .check_async(move || model_until(stop))
            .expect_err("the model panics");
        for step in failure.recent() {
            // A decision's picks follow its operation: `tokio mpsc recv, choose 1 of 2`.
            let op = step.op().split(',').next().unwrap();
            if !op.starts_with("tokio ") {
                continue;
            }
            let Some((_, calls)) = CALLS.iter().find(|(name, _)| *name == op) else {
                panic!("seed {seed}: a report calls an operation `{op}`, not in CALLS: {step:?}");
            };
            let line = source[step.location().line() as usize - 1];
            assert!(
                calls.iter().any(|call| line.contains(call)),
                "seed {seed}: `{op}` placed at a line that does not call it: {line:?}"
            );
            seen.insert(op.to_owned());
        }
    }
    // Most of the primitives' methods, not only one or two.
    assert!(seen.len() >= 20, "only {seen:?}");
}
