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

/// A driver's heartbeat, registered once per driver: the execution it runs now.
#[derive(Debug)]
pub(crate) struct Beat {
    exec: Mutex<Weak<Execution>>,
    limit: Duration,
}

impl Beat {
    /// A heartbeat for a driver whose executions may go `limit` without a switch point,
    /// watched from now on.
    pub(super) fn new(limit: Duration) -> Arc<Beat> {
        let beat = Arc::new(Beat {
            exec: Mutex::new(Weak::new()),
            limit,
        });
        WATCHED.lock().push(Arc::clone(&beat));
        if !STARTED.swap(true, Ordering::AcqRel) {
            let spawned = std::thread::Builder::new()
                .name("interleave-watchdog".into())
                .spawn(run);
            if spawned.is_err() {
                STARTED.store(false, Ordering::Release); // tried again by the next driver
            }
        }
        beat
    }

    /// The driver runs `exec` now.
    pub(super) fn running(&self, exec: &Arc<Execution>) {
        *self.exec.lock() = Arc::downgrade(exec);
    }

    /// The limit this heartbeat was made for.
    pub(super) fn limit(&self) -> Duration {
        self.limit
    }
}

/// The heartbeats of the drivers that run.
static WATCHED: Mutex<Vec<Arc<Beat>>> = Mutex::new(Vec::new());

/// Whether the watchdog thread runs.
static STARTED: AtomicBool = AtomicBool::new(false);

/// What the watchdog remembers of one driver.
struct Seen {
    beat: Arc<Beat>,
    /// The execution and step count last seen, and since when they have not changed.
    exec: u64,
    step: u64,
    since: Instant,
}

fn run() {
    let mut seen: Vec<Seen> = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        seen.extend(WATCHED.lock().drain(..).map(|beat| Seen {
            beat,
            exec: 0,
            step: u64::MAX,
            since: Instant::now(),
        }));
        seen.retain_mut(check);
    }
}

/// Looks at one driver; `false` when it is gone and need not be watched any more.
fn check(entry: &mut Seen) -> bool {
    if Arc::strong_count(&entry.beat) == 1 {
        return false; // the driver dropped its heartbeat
    }
    let Some(exec) = entry.beat.exec.lock().upgrade() else {
        return true;
    };
    // Over (between executions), or busy: a thread is in the runtime right now, so it is
    // not stuck in user code.
    if exec.host.over() {
        return true;
    }
    let Some(st) = exec.state.try_lock() else {
        return true;
    };
    if (exec.id, st.step) != (entry.exec, entry.step) {
        (entry.exec, entry.step, entry.since) = (exec.id, st.step, Instant::now());
        return true;
    }
    if entry.since.elapsed() < entry.beat.limit {
        return true;
    }
    let origin = exec.origin.as_ref();
    let test = origin.and_then(|o| o.rescue.test());
    let mut report = super::failure::unresponsive(&st, entry.beat.limit, test);
    super::abort::schedule_lines(&mut report, origin, &st);
    drop(st);
    use std::io::Write;
    let _ = std::io::stderr().write_all(report.as_bytes());
    std::process::exit(101);
}
