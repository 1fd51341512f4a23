//! Against real Tokio: small programs written once, over real Tokio and over
//! interleave-test's `tokio` module. Every outcome real Tokio gives (on a current-thread runtime, and many
//! runs of a two-worker multi-thread runtime, whose interleavings vary) must be one that
//! exhaustive DFS of the model gives: an outcome the model cannot produce is a behaviour
//! of Tokio it misses, and bugs that need it would go unfound. Where Tokio's documentation
//! fixes the outcome, the model must give exactly that one: another would be a false
//! alarm.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Mutex as StdMutex;

use interleave_test::{Builder, StrategyKind};

// Real Tokio is this package's own `tokio` dependency (with the runtime's features as a
// dev-dependency); named apart so that it is never confused with the model.
extern crate tokio as real_tokio;

/// Expands the programs into `mod $name`, over the Tokio crate `$tokio`.
macro_rules! programs {
    ($name:ident, $($tokio:ident)::+) => {
        mod $name {
            use std::future::Future;
            use std::sync::Arc;
            use std::time::Duration;

            use $($tokio)::+ as tokio;
            use tokio::sync::{
                Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, broadcast, mpsc, oneshot,
                watch,
            };
            use tokio::task::{self, JoinSet};

            /// Whether `f` is ready at once (a biased `select!` against a yield).
            async fn ready_now<F: Future>(f: F) -> bool {
                tokio::select! {
                    biased;
                    _ = f => true,
                    () = task::yield_now() => false,
                }
            }

            /// Two `notify_one`s before any `notified` store one permit; `notify_waiters`
            /// stores none.
            pub(crate) async fn notify_permits() -> (bool, bool, bool) {
                let n = Notify::new();
                n.notify_one();
                n.notify_one();
                let first = ready_now(n.notified()).await;
                let second = ready_now(n.notified()).await;
                n.notify_waiters();
                (first, second, ready_now(n.notified()).await)
            }

            /// A task waits in `notified` while main calls `notify_one`, before or after.
            pub(crate) async fn notify_one_wakes() -> u32 {
                let n = Arc::new(Notify::new());
                let waiter = tokio::spawn({
                    let n = Arc::clone(&n);
                    async move {
                        n.notified().await;
                        7
                    }
                });
                n.notify_one();
                waiter.await.unwrap()
            }

            /// Two senders of a value each on a channel of one slot.
            pub(crate) async fn mpsc_two_senders() -> Vec<u32> {
                let (tx, mut rx) = mpsc::channel(1);
                for v in [10u32, 20] {
                    let tx = tx.clone();
                    drop(tokio::spawn(async move { tx.send(v).await.unwrap() }));
                }
                drop(tx);
                let mut got = Vec::new();
                while let Some(v) = rx.recv().await {
                    got.push(v);
                }
                got
            }

            /// A watch receiver racing a sender of 1, 2, 3: what it sees before the end.
            pub(crate) async fn watch_seen() -> Vec<u32> {
                let (tx, mut rx) = watch::channel(0u32);
                let sender = tokio::spawn(async move {
                    for v in 1..=3 {
                        tx.send(v).unwrap();
                        task::yield_now().await;
                    }
                });
                let mut seen = Vec::new();
                while rx.changed().await.is_ok() {
                    seen.push(*rx.borrow_and_update());
                }
                sender.await.unwrap();
                seen
            }

            /// A broadcast of capacity 2 to a receiver racing a sender of 1 to 4: values
            /// (`Ok`) and lags (`Err`, how many were missed), until the end.
            pub(crate) async fn broadcast_lag() -> Vec<Result<u32, u64>> {
                let (tx, mut rx) = broadcast::channel(2);
                drop(tokio::spawn(async move {
                    for v in 1..=4 {
                        tx.send(v).unwrap();
                        task::yield_now().await;
                    }
                }));
                let mut got = Vec::new();
                loop {
                    match rx.recv().await {
                        Ok(v) => got.push(Ok(v)),
                        Err(broadcast::error::RecvError::Lagged(n)) => got.push(Err(n)),
                        Err(broadcast::error::RecvError::Closed) => return got,
                    }
                }
            }

            /// A waiter on a semaphore with no permits, and main closing it.
            pub(crate) async fn semaphore_close() -> bool {
                let sem = Arc::new(Semaphore::new(0));
                let waiter = tokio::spawn({
                    let sem = Arc::clone(&sem);
                    async move { sem.acquire().await.is_err() }
                });
                sem.close();
                waiter.await.unwrap()
            }

            /// An unbiased `select!` of two ready branches, and a biased one.
            pub(crate) async fn select_start() -> (u32, u32) {
                let unbiased = tokio::select! {
                    v = async { 1 } => v,
                    v = async { 2 } => v,
                };
                let biased = tokio::select! {
                    biased;
                    v = async { 1 } => v,
                    v = async { 2 } => v,
                };
                (unbiased, biased)
            }

            /// The order in which `join_next` gives three tasks.
            pub(crate) async fn join_set_order() -> Vec<u32> {
                let mut set = JoinSet::new();
                for id in 0..3u32 {
                    set.spawn(async move {
                        task::yield_now().await;
                        id
                    });
                }
                let mut order = Vec::new();
                while let Some(done) = set.join_next().await {
                    order.push(done.unwrap());
                }
                order
            }

            /// Two tasks lock a mutex main holds across a yield: the order they got it.
            pub(crate) async fn mutex_order() -> Vec<u32> {
                let m = Arc::new(Mutex::new(Vec::new()));
                let held = m.lock().await;
                let tasks: Vec<_> = (1..=2u32)
                    .map(|id| {
                        let m = Arc::clone(&m);
                        tokio::spawn(async move { m.lock().await.push(id) })
                    })
                    .collect();
                task::yield_now().await;
                drop(held);
                for t in tasks {
                    t.await.unwrap();
                }
                let order = m.lock().await.clone();
                order
            }

            /// A oneshot whose receiver a task drops: the sender sees it closed, and its
            /// value comes back.
            pub(crate) async fn oneshot_closed() -> (bool, Result<(), u32>) {
                let (tx, rx) = oneshot::channel::<u32>();
                tokio::spawn(async move { drop(rx) }).await.unwrap();
                (tx.is_closed(), tx.send(5))
            }

            /// A task aborted right after its spawn, racing its end.
            pub(crate) async fn abort_race() -> &'static str {
                let task = tokio::spawn(async {
                    task::yield_now().await;
                    1u32
                });
                task.abort();
                match task.await {
                    Ok(_) => "finished",
                    Err(e) if e.is_cancelled() => "cancelled",
                    Err(_) => "panicked",
                }
            }

            /// A closed channel refuses sends and still gives what was sent before.
            pub(crate) async fn mpsc_close_drains() -> (Vec<u32>, bool) {
                let (tx, mut rx) = mpsc::channel(4);
                tx.send(1).await.unwrap();
                tx.send(2).await.unwrap();
                rx.close();
                let refused = tx.send(3).await.is_err();
                let mut got = Vec::new();
                while let Some(v) = rx.recv().await {
                    got.push(v);
                }
                (got, refused)
            }

            /// A waiter for 2 permits and one for 1, racing to queue on a semaphore main
            /// holds: the order they got their permits.
            pub(crate) async fn semaphore_fair() -> Vec<u32> {
                let sem = Arc::new(Semaphore::new(1));
                let held = Arc::clone(&sem).acquire_owned().await.unwrap();
                let log = Arc::new(std::sync::Mutex::new(Vec::new()));
                let waiters: Vec<_> = [2u32, 1]
                    .into_iter()
                    .map(|n| {
                        let (sem, log) = (Arc::clone(&sem), Arc::clone(&log));
                        tokio::spawn(async move {
                            let _permits = sem.acquire_many(n).await.unwrap();
                            log.lock().unwrap().push(n);
                        })
                    })
                    .collect();
                task::yield_now().await;
                sem.add_permits(1);
                drop(held);
                for w in waiters {
                    w.await.unwrap();
                }
                let order = log.lock().unwrap().clone();
                order
            }

            /// A writer queued behind main's read guard (after a few yields, if it got
            /// there), and a reader that comes later: what the late reader sees.
            pub(crate) async fn rwlock_late_reader() -> u32 {
                let lock = Arc::new(RwLock::new(0u32));
                let read = lock.read().await;
                let writer = tokio::spawn({
                    let lock = Arc::clone(&lock);
                    async move { *lock.write().await += 1 }
                });
                for _ in 0..3 {
                    task::yield_now().await;
                }
                let reader = tokio::spawn({
                    let lock = Arc::clone(&lock);
                    async move { *lock.read().await }
                });
                task::yield_now().await;
                drop(read);
                writer.await.unwrap();
                reader.await.unwrap()
            }

            /// Three tasks at a barrier of three: how many were told they lead.
            pub(crate) async fn barrier_leaders() -> usize {
                let barrier = Arc::new(Barrier::new(3));
                let tasks: Vec<_> = (0..3)
                    .map(|_| {
                        let barrier = Arc::clone(&barrier);
                        tokio::spawn(async move { barrier.wait().await.is_leader() })
                    })
                    .collect();
                let mut leaders = 0;
                for t in tasks {
                    leaders += usize::from(t.await.unwrap());
                }
                leaders
            }

            /// Two tasks race to initialize a cell: the value both then see.
            pub(crate) async fn once_cell_race() -> (u32, u32) {
                let cell = Arc::new(OnceCell::new());
                let tasks: Vec<_> = [1u32, 2]
                    .into_iter()
                    .map(|v| {
                        let cell = Arc::clone(&cell);
                        tokio::spawn(async move { *cell.get_or_init(|| async move { v }).await })
                    })
                    .collect();
                let mut seen = Vec::new();
                for t in tasks {
                    seen.push(t.await.unwrap());
                }
                (seen[0], seen[1])
            }

            /// A `select!` whose only branch's pattern fails (a closed channel) takes
            /// `else`.
            pub(crate) async fn select_else() -> u32 {
                let (tx, mut rx) = mpsc::channel::<u32>(1);
                drop(tx);
                tokio::select! {
                    Some(v) = rx.recv() => v,
                    else => 0,
                }
            }

            /// `abort_all` on a set of two pending tasks: how many joined as cancelled.
            pub(crate) async fn join_set_abort_all() -> usize {
                let mut set = JoinSet::new();
                for _ in 0..2 {
                    set.spawn(std::future::pending::<()>());
                }
                set.abort_all();
                let mut cancelled = 0;
                while let Some(done) = set.join_next().await {
                    cancelled += usize::from(done.unwrap_err().is_cancelled());
                }
                cancelled
            }

            /// A permit reserved before the receiver closes still delivers its value.
            pub(crate) async fn permit_after_close() -> (Option<u32>, Option<u32>) {
                let (tx, mut rx) = mpsc::channel::<u32>(1);
                let permit = tx.reserve().await.unwrap();
                rx.close();
                permit.send(9);
                (rx.recv().await, rx.recv().await)
            }

            /// A `Notified` enabled before `notify_waiters` completes.
            pub(crate) async fn enabled_notified() -> bool {
                let notify = Notify::new();
                let mut notified = std::pin::pin!(notify.notified());
                notified.as_mut().enable();
                notify.notify_waiters();
                notified.await;
                true
            }

            /// `timeout`: a ready future wins even with no time; a pending one times out.
            pub(crate) async fn timeout_rules() -> (bool, bool) {
                let ready = tokio::time::timeout(Duration::ZERO, async { 5 }).await;
                let pending = std::future::pending::<()>();
                let late = tokio::time::timeout(Duration::from_millis(1), pending).await;
                (ready.is_ok(), late.is_err())
            }
        }
    };
}

programs!(ours, interleave_test_tokio);
programs!(real, real_tokio);

/// Runs `program` on real Tokio, 10 times on a current-thread runtime and 100 times on a
/// two-worker multi-thread one: every outcome seen.
fn real_outcomes<T: Ord, Fut: Future<Output = T>>(program: impl Fn() -> Fut) -> BTreeSet<T> {
    let mut seen = BTreeSet::new();
    for _ in 0..10 {
        let rt = real_tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        seen.insert(rt.block_on(program()));
    }
    let rt = real_tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..100 {
        seen.insert(rt.block_on(program()));
    }
    seen
}

/// Every outcome of `program` over exhaustive DFS of the model, without spurious polls:
/// the outcomes with them include these, so leaving them out makes the check stricter,
/// and DFS of these programs takes up to 30 times fewer executions.
fn model_outcomes<T, Fut>(program: impl Fn() -> Fut + Sync) -> BTreeSet<T>
where
    T: Ord + Send,
    Fut: Future<Output = T>,
{
    let seen = StdMutex::new(BTreeSet::new());
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .spurious_wakeups(false)
        .check_async(|| async {
            let outcome = program().await;
            seen.lock().unwrap().insert(outcome);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(report.exhausted);
    seen.into_inner().unwrap()
}

/// Checks that what real Tokio gave is among what the model gives.
fn among<T: Ord + Debug>(name: &str, real: BTreeSet<T>, model: BTreeSet<T>) {
    assert!(
        real.is_subset(&model),
        "{name}: real Tokio gave {:?}, which the model never gives (the model gives \
         {model:?})",
        real.difference(&model).collect::<Vec<_>>()
    );
}

macro_rules! compare {
    ($check:ident: $($program:ident),* $(,)?) => {
        $(
            #[test]
            fn $program() {
                let real = real_outcomes(real::$program);
                let model = model_outcomes(ours::$program);
                $check(stringify!($program), real, model);
            }
        )*
    };
}

// Programs whose outcome Tokio's documentation fixes: the model must give exactly it.
compare!(
    same: notify_permits,
    notify_one_wakes,
    semaphore_close,
    oneshot_closed,
    timeout_rules,
    mpsc_close_drains,
    barrier_leaders,
    select_else,
    join_set_abort_all,
    permit_after_close,
    enabled_notified,
);

// Programs whose outcome depends on the interleaving.
compare!(
    among: mpsc_two_senders,
    watch_seen,
    broadcast_lag,
    select_start,
    join_set_order,
    mutex_order,
    abort_race,
    semaphore_fair,
    rwlock_late_reader,
    once_cell_race,
);

/// Checks that the model gives exactly what real Tokio gave, for a program with one
/// documented outcome: an extra outcome would be a false alarm.
fn same<T: Ord + Debug>(name: &str, real: BTreeSet<T>, model: BTreeSet<T>) {
    assert_eq!(
        real.len(),
        1,
        "{name}: real Tokio gave several outcomes: {real:?}"
    );
    assert_eq!(
        model, real,
        "{name}: the model's outcomes differ from real Tokio's"
    );
}

/// The comparison can fail: the model's outcomes of a program with two possible results
/// do not include one that only real Tokio gives.
#[test]
fn an_outcome_the_model_lacks_is_reported() {
    let result = std::panic::catch_unwind(|| {
        among("demo", BTreeSet::from([1, 2]), BTreeSet::from([1]));
    });
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("real Tokio gave [2]"), "{message}");
}
