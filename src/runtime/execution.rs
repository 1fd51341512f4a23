//! Per-run state: one [`Execution`] per run of the model.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::object::ObjectSlot;
use super::switch::Baton;
use super::trace::Trace;
use super::{Loc, ObjId, Op, Tid};
use crate::report::{FailureKind, SourceLocation, ThreadInfo, ThreadReport};
use crate::strategy::Strategy;

/// Knobs of one execution, fixed by the driver.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExecConfig {
    /// Switch points after which the execution is reported as a livelock.
    pub(crate) max_steps: u64,
    /// Whether a panic escaping a spawned thread fails the execution (otherwise `join`
    /// returns it, as std does).
    pub(crate) thread_panics_fail: bool,
    /// The core every thread of the execution is pinned to, if any.
    pub(crate) core: Option<super::Core>,
}

/// Why a blocked thread cannot run, for the scheduler and for deadlock reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocked {
    /// What the thread is doing, as a phrase: "lock", "receive on", "join".
    pub(crate) what: &'static str,
    /// The object it waits on, if any.
    pub(crate) obj: Option<ObjId>,
    /// The thread it waits for (join), if any.
    pub(crate) thread: Option<Tid>,
    /// Virtual time at which the wait times out, if it does.
    pub(crate) deadline: Option<Duration>,
    /// Where the thread waits.
    pub(crate) loc: Loc,
}

/// How a blocked thread was released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Another thread made its condition true (or may have).
    Notified,
    /// Its deadline passed.
    TimedOut,
}

/// A model thread's scheduling state.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Status {
    Runnable,
    Blocked(Blocked),
    Finished,
}

/// Everything the runtime knows about one model thread.
#[derive(Debug)]
pub(crate) struct ThreadState {
    pub(crate) name: Option<String>,
    pub(crate) status: Status,
    /// The operation the thread is about to perform (set at each switch point).
    pub(crate) pending: Op,
    /// The OS thread that runs it, once started.
    pub(crate) os: Option<Thread>,
    /// Switch points this thread passed.
    pub(crate) steps: u64,
    /// How the last wait ended.
    pub(crate) wake: Wake,
    /// Order in which threads blocked, for FIFO wake-ups.
    pub(crate) blocked_seq: u64,
    /// `unpark` was called and not yet consumed by `park`.
    pub(crate) park_token: bool,
    /// The thread said it is spinning since its last decision (for strategies that
    /// deprioritize spinners).
    pub(crate) spinning: bool,
}

/// One scheduling choice made where more than one thread could run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DecisionRecord {
    pub(crate) step: u64,
    pub(crate) chosen: Tid,
    /// How many threads could run.
    pub(crate) options: usize,
    /// What the chosen thread was about to do.
    pub(crate) op: Op,
}

/// A failure as the runtime sees it; the driver adds schedule, seed and iteration.
#[derive(Debug)]
pub(crate) struct FailureDraft {
    pub(crate) kind: FailureKind,
    pub(crate) message: String,
    pub(crate) thread: Option<ThreadInfo>,
    pub(crate) location: Option<SourceLocation>,
    pub(crate) backtrace: Option<backtrace::Backtrace>,
    /// One entry per thread involved (deadlock, livelock).
    pub(crate) threads: Vec<ThreadReport>,
}

/// Mutable state of one execution, behind [`Execution::state`].
pub(crate) struct ExecState {
    pub(crate) threads: Vec<ThreadState>,
    pub(crate) objects: Vec<ObjectSlot>,
    pub(crate) step: u64,
    pub(crate) clock: Duration,
    pub(crate) trace: Trace,
    pub(crate) decisions: Vec<DecisionRecord>,
    /// Taken back by the driver when the execution ends.
    pub(crate) strategy: Option<Box<dyn Strategy>>,
    pub(crate) failure: Option<FailureDraft>,
    pub(crate) next_block_seq: u64,
    pub(crate) config: ExecConfig,
    /// Reused buffer for the runnable set, so switch points do not allocate.
    pub(crate) scratch: Vec<Tid>,
    /// Reused buffer for the runnable threads' next operations.
    pub(crate) scratch_ops: Vec<Op>,
    /// Times a thread was switched away from while it could have continued.
    pub(crate) preemptions: u64,
    /// Times the running thread changed.
    pub(crate) switches: u64,
}

impl std::fmt::Debug for ExecState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecState")
            .field("threads", &self.threads.len())
            .field("objects", &self.objects.len())
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

/// One run of the model.
#[derive(Debug)]
pub(crate) struct Execution {
    /// Unique in the process; primitives remember the execution they were first used in.
    pub(crate) id: u64,
    pub(crate) state: Mutex<ExecState>,
    pub(crate) baton: Baton,
    /// OS threads still running code of this execution (including thread 0).
    pub(crate) live_os: AtomicUsize,
    /// Signalled (under `state`) when `live_os` drops to zero.
    pub(crate) all_exited: Condvar,
}

impl Execution {
    /// A new execution whose thread 0 is the calling OS thread.
    pub(crate) fn new(strategy: Box<dyn Strategy>, config: ExecConfig, start: Loc) -> Arc<Self> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let main = ThreadState::new(Some("main".to_owned()), Op::start(start));
        let mut main = main;
        main.os = Some(std::thread::current());
        Arc::new(Execution {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(ExecState {
                threads: vec![main],
                objects: Vec::new(),
                step: 0,
                clock: Duration::ZERO,
                trace: Trace::default(),
                decisions: Vec::new(),
                strategy: Some(strategy),
                failure: None,
                next_block_seq: 0,
                config,
                scratch: Vec::new(),
                scratch_ops: Vec::new(),
                preemptions: 0,
                switches: 0,
            }),
            baton: Baton::new(0),
            live_os: AtomicUsize::new(1),
            all_exited: Condvar::new(),
        })
    }
}

impl ThreadState {
    pub(crate) fn new(name: Option<String>, pending: Op) -> Self {
        ThreadState {
            name,
            status: Status::Runnable,
            pending,
            os: None,
            steps: 0,
            wake: Wake::Notified,
            blocked_seq: 0,
            park_token: false,
            spinning: false,
        }
    }
}

impl ExecState {
    /// The public description of thread `tid`.
    pub(crate) fn thread_info(&self, tid: Tid) -> ThreadInfo {
        ThreadInfo::new(tid, self.threads[tid].name.clone())
    }

    /// Records the failure `make` describes, unless one is recorded already: the first
    /// failure of an execution is its cause, later ones are consequences.
    pub(crate) fn fail(&mut self, make: impl FnOnce(&Self) -> FailureDraft) {
        if self.failure.is_none() {
            self.failure = Some(make(self));
        }
    }
}
