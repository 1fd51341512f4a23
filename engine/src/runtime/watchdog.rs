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
//!
//! A thread stuck inside the runtime itself, holding the lock of the execution's state (it
//! spins or blocks there: a bug of the crate), is seen the same way: the lock stays taken,
//! not released in between (the watchdog's mark on its holder stays, `state_lock.rs`), for
//! the limit. The state cannot be read then, so the report names the thread and switch
//! point last seen while the state was free, and no schedule can be saved.

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

    /// Stops watching for a while (a thread that sleeps on purpose, for real): the execution
    /// watched, for [`resume`](Self::resume).
    pub(super) fn pause(&self) -> Weak<Execution> {
        std::mem::take(&mut *self.exec.lock())
    }

    /// Watches `exec` again, after [`pause`](Self::pause).
    pub(super) fn resume(&self, exec: Weak<Execution>) {
        *self.exec.lock() = exec;
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
    /// The execution and its progress last seen, and since when they have not changed.
    exec: u64,
    progress: Progress,
    since: Instant,
    /// The running thread and its last switch point, the last time the state was free.
    last: Option<Last>,
}

/// How far an execution has come, as the watchdog can see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Progress {
    /// Its state was free, at this step.
    Step(u64),
    /// Its state was locked, since the watchdog marked the lock's holder, `n` looks ago
    /// (`state_lock.rs`); a new mark starts again at 0.
    Held(u64),
}

/// The running thread of an execution, seen when its state was free: "model thread 'a'
/// (#1), whose last switch point was `mutex lock` at src/lib.rs:3:5".
struct Last {
    what: String,
}

fn run() {
    let mut seen: Vec<Seen> = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        seen.extend(WATCHED.lock().drain(..).map(|beat| Seen {
            beat,
            exec: 0,
            progress: Progress::Step(u64::MAX),
            since: Instant::now(),
            last: None,
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
    if exec.host.over() {
        return true; // between executions
    }
    let Some(st) = exec.state.peek() else {
        // Busy: a thread is in the runtime right now, unless it has been there, the lock
        // held without a release, for the whole limit.
        let looks = match (exec.state.mark_held(), entry.progress) {
            (true, Progress::Held(n)) if entry.exec == exec.id => Progress::Held(n + 1),
            _ => Progress::Held(0),
        };
        entry.progress = looks;
        if looks == Progress::Held(0) {
            entry.since = Instant::now();
        }
        if looks == Progress::Held(0) || entry.since.elapsed() < entry.beat.limit {
            entry.exec = exec.id;
            return true;
        }
        let origin = exec.origin.as_ref();
        let last = entry.last.as_ref().map(|l| l.what.as_str());
        let test = origin.and_then(|o| o.rescue.test());
        let iteration = origin.map(|o| o.iteration);
        let report = super::failure::held(entry.beat.limit, test, iteration, last);
        exit_with(&report);
    };
    if !unchanged(entry, exec.id, Progress::Step(st.step)) {
        let tid = st.running;
        let pending = st.threads[tid].pending;
        entry.last = Some(Last {
            what: format!(
                "model thread {}, whose last switch point was `{}` at {}",
                st.thread_info(tid),
                pending.name(),
                pending.loc
            ),
        });
        return true;
    }
    let origin = exec.origin.as_ref();
    let test = origin.and_then(|o| o.rescue.test());
    let mut report = super::failure::unresponsive(&st, entry.beat.limit, test);
    super::abort::schedule_lines(&mut report, origin, &st);
    drop(st);
    exit_with(&report);
}

/// Whether `entry` has seen execution `exec` at `progress` for the whole limit; starts
/// the count again if either changed.
fn unchanged(entry: &mut Seen, exec: u64, progress: Progress) -> bool {
    if (exec, progress) != (entry.exec, entry.progress) {
        (entry.exec, entry.progress, entry.since) = (exec, progress, Instant::now());
        return false;
    }
    entry.since.elapsed() >= entry.beat.limit
}

/// Prints `report` and ends the process: the stuck thread cannot be stopped.
fn exit_with(report: &str) -> ! {
    use std::io::Write;
    let _ = std::io::stderr().write_all(report.as_bytes());
    std::process::exit(101);
}
