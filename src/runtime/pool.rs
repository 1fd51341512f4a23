//! Reused OS threads for model threads.
//!
//! Creating an OS thread costs tens of microseconds, more than a whole small execution, so
//! model threads run on pooled workers that outlive executions. A worker that stays idle for
//! [`IDLE_EXIT`] exits, so a process that stops exploring does not keep threads around, and the
//! pool never holds more workers than the most model threads that were alive at once.
//!
//! Architecture invariant: a worker puts itself back in the idle list *before* it reports its
//! job finished, so the next execution always finds it there and the pool does not grow.

use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

use parking_lot::Mutex;

use super::affinity::Core;

/// How long an idle worker waits for a job before it exits.
const IDLE_EXIT: Duration = Duration::from_secs(2);

/// The stack size of workers when the model does not ask for one (std's default).
pub(crate) const DEFAULT_STACK: usize = 2 << 20;

/// Work for one model thread: `run` executes it, then `exited` is called once the worker is
/// back in the pool.
pub(crate) struct Job {
    pub(crate) run: Box<dyn FnOnce() + Send>,
    pub(crate) exited: Box<dyn FnOnce() + Send>,
    /// The core to run it on (the worker pins itself there first).
    pub(crate) core: Option<Core>,
}

struct Worker {
    stack: usize,
    slot: Mutex<Option<Job>>,
    os: Thread,
    /// The core the worker is pinned to, if any (moving a thread to another core is costly,
    /// so `start` prefers a worker already on the job's core).
    core: Mutex<Option<Core>>,
}

static IDLE: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());

/// Gives `job` to an idle worker with at least `stack` bytes of stack (preferably one on the
/// job's core), or to a new one. Returns the OS thread that runs it: unparking it (as
/// [`super::switch::Baton::pass`] and `abort` do) starts the job.
pub(crate) fn start(stack: usize, job: Job) -> Thread {
    let stack = stack.max(DEFAULT_STACK);
    let reused = {
        let mut idle = IDLE.lock();
        let fits = |w: &Arc<Worker>| w.stack >= stack;
        let found = idle
            .iter()
            .rposition(|w| fits(w) && *w.core.lock() == job.core)
            .or_else(|| idle.iter().rposition(fits));
        found.map(|i| idle.swap_remove(i))
    };
    match reused {
        Some(worker) => {
            // Not woken now: its job can only start when the baton is passed to it, and
            // passing the baton unparks it. Waking it here would cost two needless context
            // switches (it would wake, find it is not its turn, and park again).
            *worker.slot.lock() = Some(job);
            worker.os.clone()
        }
        None => spawn_worker(stack, job),
    }
}

fn spawn_worker(stack: usize, job: Job) -> Thread {
    let (tx, rx) = std::sync::mpsc::channel::<Arc<Worker>>();
    let handle = std::thread::Builder::new()
        .name("interleave-worker".into())
        .stack_size(stack)
        .spawn(move || {
            let me = rx
                .recv()
                .expect("the pool sends each new worker its record");
            worker_loop(&me);
        })
        .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
    let os = handle.thread().clone();
    let worker = Arc::new(Worker {
        stack,
        slot: Mutex::new(Some(job)),
        os: os.clone(),
        core: Mutex::new(None),
    });
    tx.send(worker)
        .expect("the new worker waits for its record");
    os
}

fn worker_loop(me: &Arc<Worker>) {
    loop {
        let Some(job) = wait_for_job(me) else { return };
        if job.core.is_some() {
            super::affinity::pin(job.core);
            *me.core.lock() = job.core;
        }
        (job.run)();
        IDLE.lock().push(Arc::clone(me));
        (job.exited)();
    }
}

/// Waits for the next job; `None` when the worker idled too long and left the pool.
fn wait_for_job(me: &Arc<Worker>) -> Option<Job> {
    // The next execution usually starts within microseconds: spin for it first.
    if let Some(job) = super::switch::spin_until(|| me.slot.lock().take()) {
        return Some(job);
    }
    loop {
        if let Some(job) = me.slot.lock().take() {
            return Some(job);
        }
        let before = std::time::Instant::now();
        std::thread::park_timeout(IDLE_EXIT);
        if before.elapsed() >= IDLE_EXIT {
            let mut idle = IDLE.lock();
            if let Some(i) = idle.iter().position(|w| Arc::ptr_eq(w, me)) {
                idle.swap_remove(i);
                return None;
            }
            // Taken by `start` meanwhile: its job is about to arrive.
        }
    }
}
