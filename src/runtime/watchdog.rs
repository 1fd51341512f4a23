//! The watchdog: a model thread that stops reaching switch points.
//!
//! Every model thread runs only between two switch points of the runtime; one that blocks on
//! something the crate does not model (a `std::sync::Mutex` or channel held by another model
//! thread, I/O, a real sleep) or spins on a std atomic waits for a thread that can only run
//! at its next switch point, so the execution can never go on. Nothing can take control back
//! from user code: under coroutines every thread of the execution shares the stuck OS thread,
//! and a stuck OS thread cannot be stopped either. So instead of hanging without a word, the
//! watchdog (one thread per process, started by the first execution it watches) notices that
//! an execution's step count has not moved for the limit, says which model thread was
//! running, where it last reached a switch point and what to do, and ends the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::execution::Execution;

/// Executions being watched, with the limit of each.
static WATCHED: Mutex<Vec<(Weak<Execution>, Duration)>> = Mutex::new(Vec::new());

/// Whether the watchdog thread runs.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Watches `exec` until it is dropped or marked over: if its step count does not move for
/// `limit`, the process ends with a report.
pub(super) fn watch(exec: &Arc<Execution>, limit: Duration) {
    WATCHED.lock().push((Arc::downgrade(exec), limit));
    if !STARTED.swap(true, Ordering::AcqRel) {
        let spawned = std::thread::Builder::new()
            .name("interleave-watchdog".into())
            .spawn(run);
        if spawned.is_err() {
            STARTED.store(false, Ordering::Release); // tried again by the next execution
        }
    }
}

/// What the watchdog remembers of one execution.
struct Seen {
    exec: Weak<Execution>,
    limit: Duration,
    step: u64,
    since: Instant,
}

fn run() {
    let mut seen: Vec<Seen> = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        seen.extend(WATCHED.lock().drain(..).map(|(exec, limit)| Seen {
            exec,
            limit,
            step: u64::MAX,
            since: Instant::now(),
        }));
        seen.retain_mut(check);
    }
}

/// Looks at one execution; `false` when it is over and need not be watched any more.
fn check(entry: &mut Seen) -> bool {
    let Some(exec) = entry.exec.upgrade() else {
        return false;
    };
    if exec.host.over() {
        return false;
    }
    // Busy: a thread is in the runtime right now, so it is not stuck in user code.
    let Some(st) = exec.state.try_lock() else {
        return true;
    };
    if st.step != entry.step {
        entry.step = st.step;
        entry.since = Instant::now();
        return true;
    }
    if entry.since.elapsed() < entry.limit {
        return true;
    }
    let report = super::failure::unresponsive(&st, entry.limit);
    drop(st);
    use std::io::Write;
    let _ = std::io::stderr().write_all(report.as_bytes());
    std::process::exit(101);
}
