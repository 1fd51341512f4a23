//! Per-run state: one [`Execution`] per run of the model.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::host::{HostShared, Hosting};
use super::object::Objects;
use super::trace::Trace;
use super::{Loc, ObjId, Op, OpKind, Tid};
use crate::hb::Hb;
use crate::memory::Memory;
use crate::op::PickKind;
use crate::report::{SourceLocation, ThreadInfo, ThreadReport};
use crate::schedule::FailureKind;
use crate::strategy::Strategy;

pub(crate) use super::state_lock::{StateGuard, StateLock};

/// Knobs of one execution, fixed by the driver.
#[derive(Clone, Copy, Debug)]
pub struct ExecConfig {
    /// Switch points after which the execution is reported as a livelock.
    pub max_steps: u64,
    /// Whether a panic escaping a spawned thread fails the execution (otherwise `join`
    /// returns it, as std does).
    pub thread_panics_fail: bool,
    /// What runs the model threads.
    pub substrate: crate::settings::Substrate,
    /// Stack size of a model thread that does not ask for one.
    pub stack_size: usize,
    /// The core every OS thread of the execution is pinned to, if any (OS-thread substrate).
    pub core: Option<super::Core>,
    /// How long a model thread may go without reaching a switch point (`None`: forever).
    pub watchdog: Option<Duration>,
    /// How threads that spin are held back, so that DFS does not run a spin loop for ever
    /// (see `spins.rs`).
    pub spins: crate::settings::SpinRule,
    /// Whether the execution starts without the memory model's clocks and store histories,
    /// which change nothing while it uses only `SeqCst` atomics and no plain cells. The
    /// first operation that needs them marks the execution ([`ExecState::start_over`]),
    /// which runs on to its end untracked, no thread unwound, for the driver to discard it
    /// and run it again from the start, tracked: the same decisions lead to the same point,
    /// so the result is the tracked execution's (under DFS the whole search starts over:
    /// see `driver::run_sequential`). Set except to replay.
    pub untracked_start: bool,
    /// Whether waits may wake spuriously and weak compare-and-exchanges fail spuriously
    /// (decisions; see `waits.rs`).
    pub spurious: bool,
    /// How many early endings (timeouts while other threads could act, spurious wake-ups
    /// and failures) each thread may have per execution (`None`: no limit); set for DFS
    /// and to replay its schedules.
    pub early_limit: Option<u32>,
    /// How the virtual clock moves: under `Clock::Paused` no timer or timed wait ends while
    /// another thread could act (`timers.rs`).
    pub clock: crate::settings::Clock,
    /// Whether an operation declared `Role::Acquire` that could take effect while another
    /// thread holds its object is a `Misuse` (`exclusive.rs`): in a search, whose reduction
    /// relies on it, and in the replay of a search's schedule.
    pub check_acquires: bool,
    /// Whether the outcome keeps the threads' names even when the execution passed (a stored
    /// schedule's judgement compares them).
    pub keep_names: bool,
    /// An OS thread's ambient execution (`ambient.rs`): its failures panic its only
    /// thread, which goes on; `max_steps` is its next check for a use of its primitives by
    /// another OS thread, not a livelock bound; its decisions are not all kept.
    pub ambient: bool,
    /// Tests only (the facade's unit tests set it): whether a future's wait between polls is
    /// a switch point even when it blocks, the unpruned search `wakes::blocks_in_place` is
    /// checked against. Always `false` otherwise.
    pub blocking_wait_switches: bool,
    /// Whether an execution that reaches `max_steps` ends there as a pass (its threads torn
    /// down, every one unwound), rather than failing as a livelock: for a model whose
    /// threads run for ever (a server loop), as shuttle's `MaxSteps::ContinueAfter`.
    pub pass_at_max_steps: bool,
}

/// The memory model of an execution, given back to the driver when the execution ends
/// (`thread::run_execution`), for the next one to reuse its buffers.
#[derive(Debug)]
pub(crate) struct MemSlot(pub(crate) Option<Box<Memory>>);

impl std::ops::Deref for MemSlot {
    type Target = Memory;

    fn deref(&self) -> &Memory {
        self.0
            .as_deref()
            .expect("the memory model stays until the execution has ended")
    }
}

impl std::ops::DerefMut for MemSlot {
    fn deref_mut(&mut self) -> &mut Memory {
        self.0
            .as_deref_mut()
            .expect("the memory model stays until the execution has ended")
    }
}

/// Why a blocked thread cannot run, for the scheduler and for deadlock reports.
#[derive(Clone, Copy, Debug)]
pub struct Blocked {
    /// What the thread waits to do.
    pub what: Waits,
    /// The object it waits on, if any.
    pub obj: Option<ObjId>,
    /// The thread it waits for (join), if any.
    pub thread: Option<Tid>,
    /// Virtual time at which the wait times out, if it does.
    pub deadline: Option<Duration>,
    /// Where the thread waits.
    pub loc: Loc,
}

/// What a blocked thread waits to do; reports say it as "waits to `<phrase> <object>`".
/// A primitive says what its threads wait for in its own words ([`Waits::To`]); the others
/// are the engine's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waits {
    /// What a primitive's thread waits to do to it, as the primitive says it: "lock",
    /// "receive on", "be notified on". Threads waiting to do the same are woken together
    /// (`Access::wake_doing`).
    To(&'static str),
    /// Join a thread.
    Join,
    /// Be unparked.
    Park,
    /// Be woken, between two polls of a future.
    Wake,
    /// Sleep until a deadline.
    Sleep,
    /// Perform an operation that cannot take effect yet (a deadlock report's words for a
    /// thread stopped before it).
    Perform(OpKind),
}

impl Waits {
    /// The verb phrase of reports: "lock", "receive on", "join".
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            Waits::To(phrase) => phrase,
            Waits::Join => "join",
            Waits::Park => "park",
            Waits::Wake => "be woken",
            Waits::Sleep => "sleep",
            Waits::Perform(op) => op.waits_to(),
        }
    }
}

/// How a blocked thread was released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
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

/// Why a model thread is unwinding, as it last told the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unwinding {
    /// It is not unwinding.
    No,
    /// A panic of the model (it poisons locks, as in std).
    Panic,
    /// Teardown unwinds it with the private marker payload (nothing is poisoned).
    Teardown,
}

/// Where an execution is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The strategy decides who runs; operations are recorded.
    Running,
    /// A failure is recorded: threads are unwound one at a time in a fixed order, nothing
    /// is recorded any more (see `teardown.rs`).
    TearingDown,
}

/// Everything the runtime knows about one model thread.
#[derive(Debug)]
pub(crate) struct ThreadState {
    /// Its name, if it was given one (a boxed `str`: the table of threads is indexed at
    /// every switch point, and 256 bytes a thread make that one shift; measured).
    pub(crate) name: Option<Box<str>>,
    pub(crate) status: Status,
    /// The operation the thread is about to perform (set at each switch point).
    pub(crate) pending: Op,
    /// What runs it.
    pub(crate) hosting: Hosting,
    /// Its stack size in bytes.
    pub(crate) stack: usize,
    /// Switch points this thread passed.
    pub(crate) steps: u64,
    /// How the last wait ended.
    pub(crate) wake: Wake,
    /// Order in which threads blocked, for FIFO wake-ups.
    pub(crate) blocked_seq: u64,
    /// `unpark` was called and not yet consumed by `park`.
    pub(crate) park_token: bool,
    /// Waits it ended early and weak compare-and-exchanges it failed spuriously.
    pub(crate) early: u32,
    /// Where its last operation, a `try_lock`, `try_read` or `try_write`, failed (a failed
    /// try is a spin for strategies only when it fails again there).
    pub(crate) last_failed_try: Option<super::Loc>,
    /// What `SpinRule::Repeats` knows of it.
    pub(crate) spins: super::spins::Spins,
    /// Where it spun since another thread last ran (as `ExecState::switches` counted then,
    /// the second field): spinning again at one of them is a repeated spin (`events::spun`).
    pub(crate) spun_at: (Vec<super::Loc>, u64),
    /// That it spun (and how often in a row) or was woken, for its next decision, event
    /// and clock step.
    pub(crate) signals: super::signals::Signals,
    /// Where it is in its life, how it unwinds, and what teardown asked of it.
    pub(crate) life: super::life::Life,
    /// It runs in a `thread::scope` (it borrows from its parent's stack).
    pub(crate) scoped: bool,
}

/// One scheduling choice made where more than one thread could run.
#[derive(Clone, Copy, Debug)]
pub struct DecisionRecord {
    /// The step it was made at.
    pub(crate) step: u64,
    /// The thread it chose.
    pub chosen: Tid,
    /// How many threads could run.
    pub(crate) options: usize,
    /// What the chosen thread was about to do.
    pub(crate) op: Op,
    /// For a decision other than the choice of a thread: its kind and the option taken
    /// (`chosen` is then the thread that decided, `options` counts options).
    pub pick: Option<(PickKind, usize)>,
    /// For the pick of a `notify_one`: the thread it woke (for reports).
    pub(crate) woke: Option<Tid>,
    /// For a timeout taken early (`PickKind::TimeOut`, option 1): what fired (for reports).
    pub(crate) fired: Option<Fired>,
    /// What reports call the pick, when its kind does not say (`select!`'s start branch
    /// is a `choose`).
    pub(crate) named: Option<&'static str>,
}

/// A timer or timed wait that a decision ended while other threads could still act.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fired {
    /// The call that made the timer, or for a timed wait of a thread, its operation's name
    /// and location.
    pub(crate) armed: super::timers::Armed,
    /// Whether it was a future's timer (`tokio::time`), not a thread's timed wait.
    pub(crate) timer: bool,
    /// Its deadline, where the clock moved to (virtual time since the start).
    pub(crate) deadline: Duration,
    /// The clock before it fired.
    pub(crate) clock: Duration,
}

/// A failure as the runtime sees it; the driver adds schedule, seed and iteration.
#[derive(Debug)]
pub struct FailureDraft {
    /// What failed.
    pub(crate) kind: FailureKind,
    /// What the report says first.
    pub(crate) message: String,
    /// The thread that failed, if one did.
    pub(crate) thread: Option<ThreadInfo>,
    /// Where it failed in the program, if known.
    pub(crate) location: Option<SourceLocation>,
    /// The failing thread's backtrace, unresolved, if one was taken.
    pub(crate) backtrace: Option<backtrace::Backtrace>,
    /// One entry per thread involved (deadlock, livelock).
    pub(crate) threads: Vec<ThreadReport>,
}

/// Where control goes when the running thread stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// This thread runs next.
    Thread(Tid),
    /// The execution is over (or stuck): back to the driver for good.
    End,
}

/// Mutable state of one execution, behind [`Execution::state`].
pub(crate) struct ExecState {
    pub(crate) threads: Vec<ThreadState>,
    pub(crate) objects: Objects,
    pub(crate) step: u64,
    pub(crate) clock: Duration,
    pub(crate) trace: Trace,
    pub(crate) decisions: Vec<DecisionRecord>,
    /// Taken back by the driver when the execution ends.
    pub(crate) strategy: Option<Box<dyn Strategy>>,
    /// Whether the strategy reads the runnable threads' next operations.
    pub(crate) strategy_reads_ops: bool,
    pub(crate) failure: Option<FailureDraft>,
    /// The untracked execution reached an operation that needs tracking: it runs on to its
    /// end, untracked, and whatever it does then is discarded (its `failure` included); the
    /// driver runs it again tracked (see [`ExecConfig::untracked_start`]).
    pub(crate) start_over: bool,
    /// The execution found a loop's explicit yield (see `ExecOutcome::relearned`).
    pub(crate) relearned: bool,
    /// The execution reached `max_steps` and ends there as a pass
    /// ([`ExecConfig::pass_at_max_steps`]).
    pub(crate) cut: bool,
    pub(crate) phase: Phase,
    /// The thread that runs (or was last given control).
    pub(crate) running: Tid,
    pub(crate) next_block_seq: u64,
    pub(crate) config: ExecConfig,
    /// Whether teardown unwinds every thread, rather than leaving behind those it need not
    /// run (decided when teardown starts; see `teardown.rs`).
    pub(crate) unwind_all: Option<bool>,
    /// Reused buffer for the runnable set, so switch points do not allocate.
    pub(crate) scratch: Vec<Tid>,
    /// Reused buffer for the runnable threads' next operations.
    pub(crate) scratch_ops: Vec<Op>,
    /// How often each key changed (under `SpinRule::Repeats`).
    pub(crate) versions: super::spins::Versions,
    /// Scheduling points at which a thread was held back under `SpinRule::Repeats`.
    pub(crate) spin_holds: u64,
    /// Waits that could have ended early but for `ExecConfig::early_limit` (`waits.rs`).
    pub(crate) early_withheld: u64,
    /// Times a thread was switched away from while it could have continued.
    pub(crate) preemptions: u64,
    /// Times the running thread changed.
    pub(crate) switches: u64,
    /// Scheduling points at which one thread alone could run (no decision between
    /// threads): they count [`LONE_STEPS_PER_STEP`](super::sched::LONE_STEPS_PER_STEP)
    /// times less towards `max_steps` (`sched::over_limit`).
    pub(crate) lone_steps: u64,
    /// Happens-before tracking, when the strategy reads events (see `events.rs`).
    pub(crate) hb: Option<Box<Hb>>,
    /// The memory model: what atomics read, which plain accesses race.
    pub(crate) mem: MemSlot,
    /// The `Arc` allocations made in this execution (see `arcs.rs`).
    pub(crate) arcs: Vec<super::arcs::ArcState>,
    /// The references once-cells hold (see `claims.rs`).
    pub(crate) claims: super::claims::Claims,
    /// What threads that poll futures know as pollers, by thread id (see `wakes.rs`).
    pub(crate) tasks: Vec<Option<super::wakes::TaskState>>,
    /// Labels the program gave threads (`current::set_label`), by thread id; empty until
    /// one is given (kept out of `ThreadState`, which every switch point indexes).
    pub(crate) labels: Vec<Option<Box<str>>>,
    /// The timers of futures (see `timers.rs`).
    pub(crate) timers: super::timers::Timers,
    /// This execution's own states of primitives several executions use, by key, dropped
    /// with it (see `per_exec.rs`).
    pub(crate) lent: Vec<(u64, std::sync::Arc<dyn std::any::Any + Send + Sync>)>,
}

impl std::fmt::Debug for ExecState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecState")
            .field("threads", &self.threads.len())
            .field("objects", &self.objects.len())
            .field("step", &self.step)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

/// Buffers an execution takes from the one before it on the same driver (empty, with
/// their capacity), to save allocations.
#[derive(Debug, Default)]
pub(crate) struct Spare {
    pub(crate) decisions: Vec<DecisionRecord>,
    pub(crate) threads: Vec<ThreadState>,
    pub(crate) tasks: Vec<Option<super::wakes::TaskState>>,
    /// `ExecState::scratch` and `scratch_ops`.
    pub(crate) scratch: (Vec<Tid>, Vec<Op>),
}

impl Spare {
    /// Empties every buffer, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.decisions.clear();
        self.threads.clear();
        self.tasks.clear();
        self.scratch.0.clear();
        self.scratch.1.clear();
    }
}

/// One run of the model.
#[derive(Debug)]
pub struct Execution {
    /// Unique in the process; primitives remember the execution they were first used in.
    pub(crate) id: u64,
    /// Whether threads that repeat a spin are held back (`SpinRule::Repeats`), readable
    /// without locking the state: only then does `runtime::unchanged` need it.
    pub(crate) repeats: bool,
    pub(crate) state: StateLock<ExecState>,
    /// What the substrates share with the driver (see `host/`).
    pub(crate) host: HostShared,
    /// Where its schedule goes if the process must abort (see `abort.rs`).
    pub(crate) origin: Option<super::Origin>,
}

impl Execution {
    /// A new execution whose thread 0 (`main`) starts at `start`, in the `spare` buffers
    /// (empty). `hb` (reset here) tracks happens-before if the strategy reads events.
    /// `origin`: where it comes from, for a report before an abort.
    pub(crate) fn new(
        strategy: Box<dyn Strategy>,
        config: ExecConfig,
        origin: Option<super::Origin>,
        start: Loc,
        spare: Spare,
        mut hb: Option<Box<Hb>>,
        mut mem: Box<Memory>,
    ) -> Arc<Self> {
        debug_assert!(spare.decisions.is_empty() && spare.threads.is_empty());
        let Spare {
            decisions,
            mut threads,
            tasks,
            scratch: (scratch, scratch_ops),
        } = spare;
        mem.reset(!config.untracked_start);
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let hosting = Hosting::default_for(config.substrate);
        let first = Op::start(start);
        if let Some(hb) = hb.as_deref_mut() {
            hb.reset();
            hb.begin(0, &first, None, &[0], false);
        }
        let main = ThreadState::new(Some("main".to_owned()), first, hosting, 0);
        Arc::new(Execution {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            repeats: config.spins == crate::settings::SpinRule::Repeats,
            state: StateLock::new(ExecState {
                threads: {
                    threads.reserve(4);
                    threads.push(main);
                    threads
                },
                objects: Objects::with_capacity(8),
                step: 0,
                clock: Duration::ZERO,
                trace: Trace::default(),
                decisions,
                strategy_reads_ops: strategy.reads_ops(),
                strategy: Some(strategy),
                failure: None,
                start_over: false,
                relearned: false,
                cut: false,
                phase: Phase::Running,
                running: 0,
                unwind_all: None,
                next_block_seq: 0,
                config,
                scratch,
                scratch_ops,
                versions: super::spins::Versions::default(),
                spin_holds: 0,
                early_withheld: 0,
                preemptions: 0,
                switches: 0,
                lone_steps: 0,
                hb,
                mem: MemSlot(Some(mem)),
                arcs: Vec::new(),
                claims: super::claims::Claims::default(),
                tasks,
                labels: Vec::new(),
                timers: super::timers::Timers::new(config.clock),
                lent: Vec::new(),
            }),
            host: HostShared::new(&super::thread::ENGINE, config.substrate, config.core),
            origin,
        })
    }
}

impl ThreadState {
    /// A runnable thread that has not started; `stack` 0 means the execution's default.
    pub(crate) fn new(name: Option<String>, pending: Op, hosting: Hosting, stack: usize) -> Self {
        ThreadState {
            name: name.map(String::into_boxed_str),
            status: Status::Runnable,
            pending,
            hosting,
            stack,
            steps: 0,
            wake: Wake::Notified,
            blocked_seq: 0,
            park_token: false,
            early: 0,
            last_failed_try: None,
            spins: super::spins::Spins::default(),
            spun_at: (Vec::new(), 0),
            signals: super::signals::Signals::default(),
            life: super::life::Life::default(),
            scoped: false,
        }
    }

    /// Whether the thread has finished.
    pub(crate) fn finished(&self) -> bool {
        matches!(self.status, Status::Finished)
    }
}

impl ExecState {
    /// The buffers of this execution (but its decisions, which its outcome takes) for the
    /// next one, as they are: the caller empties them once the state is unlocked (a task's
    /// state may hold a waker of the program's, whose drop may run its code).
    pub(crate) fn take_spare(&mut self) -> Spare {
        Spare {
            decisions: Vec::new(),
            threads: std::mem::take(&mut self.threads),
            tasks: std::mem::take(&mut self.tasks),
            scratch: (
                std::mem::take(&mut self.scratch),
                std::mem::take(&mut self.scratch_ops),
            ),
        }
    }

    /// Whether the memory model tracks this execution (see
    /// [`ExecConfig::untracked_start`]).
    #[inline]
    pub(crate) fn tracked(&self) -> bool {
        !self.config.untracked_start
    }

    /// Whether the memory model tracks this execution, for an operation that needs it to
    /// (`needs`) or not: the one place where an untracked execution learns it must start
    /// over. One that meets such an operation while it runs is marked for the driver to run
    /// again, tracked. Starting over is not a failure, so no thread is unwound for it: the
    /// operation goes on untracked (a load reads the newest store, which RC11 allows; a cell
    /// access is not checked for races; a fence adds nothing to sequential consistency), and
    /// the execution runs to its end, bounded by `max_steps` as any other, whatever it then
    /// does (pass, panic, deadlock, livelock): the driver discards it and reports only the
    /// tracked run. Once the execution tears down after a failure (reached without such an
    /// operation), that failure is its result, and nothing starts over.
    #[inline]
    pub(crate) fn tracked_for(&mut self, needs: bool) -> bool {
        let tracked = self.tracked();
        if !tracked && needs && self.phase == Phase::Running {
            self.start_over = true;
        }
        tracked
    }

    /// The public description of thread `tid`.
    pub(crate) fn thread_info(&self, tid: Tid) -> ThreadInfo {
        let name = self.threads[tid].name.as_deref().map(str::to_owned);
        ThreadInfo::new(tid, name)
            .with_task(super::wakes::is_task(self, tid))
            .with_label(self.label(tid).map(str::to_owned))
    }

    /// The label the program gave thread `tid`, if any.
    pub(crate) fn label(&self, tid: Tid) -> Option<&str> {
        self.labels.get(tid).and_then(Option::as_deref)
    }

    /// Records the failure `make` describes, unless one is recorded already: the first
    /// failure of an execution is its cause, later ones are consequences. The execution
    /// then tears down.
    pub(crate) fn fail(&mut self, make: impl FnOnce(&Self) -> FailureDraft) {
        if self.failure.is_none() {
            self.failure = Some(make(self));
        }
        self.phase = Phase::TearingDown;
    }

    /// The stack size of thread `tid` in bytes.
    pub(crate) fn stack_of(&self, tid: Tid) -> usize {
        match self.threads[tid].stack {
            0 => self.config.stack_size,
            n => n.max(crate::settings::MIN_STACK_SIZE),
        }
    }
}
