//! The driver: [`Builder`] and the entry points that run a model under a strategy.
//!
//! The environment variables it applies are listed in [`env`](mod@env); `settings/` reads
//! them (`env_vars.rs`, and `kinds.rs` for the substrate, reduction and strategy).

use std::panic::Location;
use std::time::Duration;

pub use async_model::{check_async, explore_async};

use crate::driver::{self, Plan, ShowProgress};
use crate::report::Failure;
use crate::run::ExecConfig;
use crate::schedule::Schedule;
use crate::settings::{Clock, SpinRule};
use crate::strategy::Strategy;
use crate::summary::Report;

mod async_model;
#[cfg(test)]
mod progress_accuracy;
mod revisit;
mod saved;

use crate::settings::{
    DEFAULT_PCT_DEPTH, DEFAULT_STACK_SIZE, MIN_STACK_SIZE, Reduction, StrategyKind, Substrate, env,
    env_bound, env_flag, env_secs, env_u64,
};
pub(crate) use revisit::Verdict;
pub(crate) use saved::{save_for_later, saved_schedule_path};

const DEFAULT_ITERATIONS: u64 = 1000;
const DEFAULT_MAX_STEPS: u64 = 100_000;

/// Configuration of an exploration, and the entry points that run one.
///
/// ```
/// use interleave_test::sync::atomic::{AtomicUsize, Ordering};
/// use interleave_test::sync::Arc;
/// use interleave_test::{thread, Builder};
///
/// let report = Builder::new().seed(7).iterations(100).check(|| {
///     let n = Arc::new(AtomicUsize::new(0));
///     let n2 = Arc::clone(&n);
///     let t = thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst));
///     n.fetch_add(1, Ordering::SeqCst);
///     t.join().unwrap();
///     assert_eq!(n.load(Ordering::SeqCst), 2);
/// });
/// assert_eq!(report.unwrap().executions, 100);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Builder {
    /// Executions to run (at least 1). `None` (unless the environment sets it): 1000 for
    /// random and PCT, no cap for DFS, whose search ends when it has explored everything; a
    /// cap set for DFS leaves a search unfinished, and its report says so. A random or PCT
    /// run whose first two executions make no decision ends there, exhausted: the model has
    /// one schedule.
    pub iterations: Option<u64>,
    /// A wall-clock budget for the whole exploration (`None`: none). When it runs out, no
    /// new execution starts; the report says how far the run got, and a DFS search that
    /// did not finish is not exhausted.
    pub max_time: Option<Duration>,
    /// Whether a DFS search that runs longer than about two seconds prints a progress line
    /// to stderr, at most once a second (on unless the environment turns it off).
    pub progress: bool,
    /// Seed of the strategy: the same seed gives the same executions.
    pub seed: u64,
    /// Switch points an execution may pass before it is reported as a livelock (at least 1);
    /// one at which a thread alone could run (no decision between threads) counts a tenth.
    pub max_steps: u64,
    /// Whether an execution that reaches `max_steps` ends there as a pass instead (off
    /// unless set), as shuttle's `MaxSteps::ContinueAfter`: for a model whose threads run
    /// for ever (a server's loop), where what matters happens early. Its threads are then
    /// unwound, their destructors run. The report counts such executions
    /// ([`Report::cut_at_max_steps`](crate::Report::cut_at_max_steps)) and an exhausted
    /// search says its schedules were explored up to `max_steps` only.
    pub pass_at_max_steps: bool,
    /// The search algorithm.
    pub strategy: StrategyKind,
    /// How DFS avoids equivalent schedules (DPOR unless set); other strategies ignore it.
    pub reduction: Reduction,
    /// Name of the test, recorded in schedules and checked on replay.
    pub name: Option<String>,
    /// Whether a panic escaping a spawned thread fails the execution (the default). When
    /// `false`, `join` returns the panic payload as std does, and only a panic of the model
    /// closure itself fails. A task's panic (`future::spawn`, Tokio's tasks) goes to its
    /// `JoinHandle` either way; by default it fails the execution unless the program looks
    /// at the `JoinError` (`is_panic`, `into_panic`, ...; see `future::JoinError`).
    pub thread_panics_fail: bool,
    /// Whether `Condvar::wait` and `thread::park` may return without a wake-up and
    /// `compare_exchange_weak` may fail where it could succeed, as std allows (on unless
    /// set). Each is a decision the search explores; turning them off takes fewer
    /// executions, for models that already handle them or that want to ignore them.
    pub spurious_wakeups: bool,
    /// Whether DFS holds back a thread that comes back to a switch point with nothing
    /// changed since it was last there (a spin loop), until every other thread that could
    /// run then has run (on unless set). Without it a spin-wait is unrolled along the first
    /// path until `max_steps` and reported as a livelock. With it, what the search skips is
    /// the schedules in which such a thread goes on first; they differ only where the
    /// thread's own state changed (a bounded retry loop that gives up before another thread
    /// acts), and a report whose search held a thread back says "under fair scheduling of
    /// spin loops". Random and PCT hold nothing back.
    pub fair_spins: bool,
    /// Executions run at once, each on its own OS threads (at least 1). Results do not depend
    /// on it. With more than one, the model closure runs on several threads at once, so it
    /// must be `Sync`, and a `static` shared between executions is reported as misuse by
    /// whichever execution reaches it second. A random or PCT run starts on one thread, and
    /// starts the others only after a millisecond, if the executions left look like two or
    /// more: a run of tens or hundreds of executions is as fast as at 1.
    pub parallelism: usize,
    /// What runs the model threads (coroutines unless set).
    pub substrate: Substrate,
    /// How the virtual clock moves ([`Clock::Loaded`] unless set): whether a timer or timed
    /// wait may end while other threads could still act. Recorded in schedules; a replay
    /// uses the clock its schedule recorded, whatever this says, but a stored schedule of an
    /// `#[interleave]` test is judged on this one (the test's clock may be its fix).
    pub clock: Clock,
    /// Stack size in bytes of every model thread that does not set its own with
    /// [`thread::Builder::stack_size`](crate::thread::Builder::stack_size), the model
    /// closure's included (at least 16 KiB).
    pub stack_size: usize,
    /// How long a model thread may run without reaching a switch point (`None`: no limit;
    /// 10 s unless set). Such a thread waits on something the crate does not model (a std
    /// lock held by another model thread, I/O) or spins on a std atomic, and nothing can stop
    /// it: the process then exits with a report that names the thread and where it was,
    /// rather than hang without a word.
    pub watchdog: Option<Duration>,
    /// The regression corpus of the `#[interleave]` test this builder runs (set by
    /// `for_test`): where a schedule is stored when the process must abort before the
    /// failure can be returned (a destructor panicked during unwinding).
    pub(crate) regressions: Option<crate::corpus::Corpus>,
    /// Whether a future's wait between polls that finds no wake is a switch point of its
    /// own (default `false`). Off, it is a step with no decision before it: the wait reads
    /// only the thread's own wake token, timers and the clock, and what another thread could
    /// do first that it would see (wake it, pass its deadline) ends the blocked wait just as
    /// well afterwards, so the same outcomes are explored with fewer executions. On, the
    /// unpruned rule, which the crate's tests check that pruning against.
    pub switch_before_waits: bool,
    /// Unit tests only: a random or PCT run starts all its drivers after its first
    /// execution (see `driver::Widening`).
    #[cfg(test)]
    pub(crate) widen_at_once: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// Defaults, overridden by the variables of [`env`](mod@env). Panics with an explanation when a
    /// variable is set to a value that cannot be used.
    pub fn new() -> Self {
        Builder {
            iterations: env_u64(env::ITERATIONS),
            max_time: env_secs(env::MAX_TIME),
            progress: env_flag(env::PROGRESS).unwrap_or(true),
            seed: env_u64(env::SEED).unwrap_or_else(fresh_seed),
            max_steps: env_u64(env::MAX_STEPS).unwrap_or(DEFAULT_MAX_STEPS),
            pass_at_max_steps: false,
            strategy: StrategyKind::from_env().unwrap_or(StrategyKind::Random),
            reduction: Reduction::from_env().unwrap_or_default(),
            name: None,
            thread_panics_fail: true,
            spurious_wakeups: true,
            fair_spins: true,
            parallelism: env_u64(env::PARALLELISM)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .unwrap_or_else(default_parallelism),
            substrate: Substrate::from_env().unwrap_or_default(),
            clock: Clock::from_env().unwrap_or_default(),
            stack_size: env_u64(env::STACK_SIZE)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .unwrap_or(DEFAULT_STACK_SIZE),
            watchdog: crate::settings::watchdog_from_env(),
            regressions: None,
            switch_before_waits: false,
            #[cfg(test)]
            widen_at_once: false,
        }
    }

    /// Sets how long a model thread may run without reaching a switch point (`None`: no
    /// limit); see the field. Panics on a zero duration.
    pub fn watchdog(mut self, limit: Option<Duration>) -> Self {
        self.watchdog = limit;
        self.validate();
        self
    }

    /// Sets what runs the model threads.
    pub fn substrate(mut self, substrate: Substrate) -> Self {
        self.substrate = substrate;
        self
    }

    /// Sets how the virtual clock moves (see [`Clock`]): `Clock::Paused` for a test that
    /// assumes its timeouts are generous, so that no timer fires while the work it bounds
    /// could still go on, with any runtime flavour and in std-shaped models.
    ///
    /// ```
    /// use interleave_test_tokio::{self as tokio, time};
    /// use interleave_test::{Builder, Clock};
    /// use std::time::Duration;
    ///
    /// let work = || async {
    ///     let task = tokio::spawn(time::sleep(Duration::from_millis(2)));
    ///     let done = time::timeout(Duration::from_secs(1), task).await;
    ///     assert!(done.is_ok(), "two milliseconds of work took over a second");
    /// };
    /// let builder = Builder::new().seed(1).iterations(50);
    /// assert!(builder.clone().check_async(work).is_err(), "the loaded clock fires early");
    /// builder.clock(Clock::Paused).check_async(work).unwrap();
    /// ```
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the stack size of model threads that do not set their own; panics below 16 KiB.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self.validate();
        self
    }

    /// Sets how many executions run at once; panics if `n` is 0.
    pub fn parallelism(mut self, n: usize) -> Self {
        self.parallelism = n;
        self.validate();
        self
    }

    /// Sets the number of executions (for DFS, a cap); panics if `n` is 0.
    pub fn iterations(mut self, n: u64) -> Self {
        self.iterations = Some(n);
        self.validate();
        self
    }

    /// Sets a wall-clock budget for the exploration; panics on a zero duration.
    pub fn max_time(mut self, budget: Duration) -> Self {
        self.max_time = Some(budget);
        self.validate();
        self
    }

    /// Sets whether a long DFS search prints its progress to stderr (on by default; printed
    /// only when stderr is a terminal, unless `INTERLEAVE_PROGRESS=1` asks for it in logs too,
    /// a line per update). The line names the test or model searched. After
    /// about two seconds, at most once a second: executions so far and per second, the depth
    /// of the current path, and a range for the size of the whole search and the time left.
    /// The range comes from the weighted backtrack estimator (the executions run divided by
    /// the share of the search tree they cover), widened by how far that estimator was
    /// measured to err on the crate's own models: 0.3 to 1.5 times it without reduction,
    /// 0.4 to 12 times with DPOR (which learns of branches late), and only an upper end,
    /// 1.5 times, under a preemption bound (whose lopsided trees make it run high, by up to
    /// a thousand times early on).
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the step limit of one execution; panics if `n` is 0.
    pub fn max_steps(mut self, n: u64) -> Self {
        self.max_steps = n;
        self.validate();
        self
    }

    /// Sets whether an execution that reaches `max_steps` ends there as a pass rather than
    /// failing as a livelock (see the field).
    pub fn pass_at_max_steps(mut self, on: bool) -> Self {
        self.pass_at_max_steps = on;
        self
    }

    /// Sets the strategy; panics on a PCT depth of 0.
    pub fn strategy(mut self, strategy: StrategyKind) -> Self {
        self.strategy = strategy;
        self.validate();
        self
    }

    /// Sets how DFS avoids equivalent schedules ([`Reduction::Off`] runs every schedule).
    pub fn reduction(mut self, reduction: Reduction) -> Self {
        self.reduction = reduction;
        self
    }

    /// Names the test, so its schedules say which test they belong to.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets whether waits may wake spuriously and weak compare-and-exchanges fail
    /// spuriously (see the field).
    pub fn spurious_wakeups(mut self, on: bool) -> Self {
        self.spurious_wakeups = on;
        self
    }

    /// Sets whether a future's wait between polls that finds no wake is a switch point
    /// (see the field).
    pub fn switch_before_waits(mut self, on: bool) -> Self {
        self.switch_before_waits = on;
        self
    }

    /// Sets whether DFS holds back threads that repeat a spin (see the field).
    pub fn fair_spins(mut self, on: bool) -> Self {
        self.fair_spins = on;
        self
    }

    /// Sets whether a panic in a spawned thread fails the execution (see the field).
    pub fn thread_panics_fail(mut self, fail: bool) -> Self {
        self.thread_panics_fail = fail;
        self
    }

    #[track_caller]
    fn validate(&self) {
        assert!(
            self.iterations != Some(0),
            "interleave_test::Builder: iterations is 0, which would run no execution; use at least 1"
        );
        assert!(
            self.max_time != Some(Duration::ZERO),
            "interleave_test::Builder: max_time is 0, which would run no execution; use None for \
             no budget, or a duration such as 60 s"
        );
        if let StrategyKind::Pct { depth: 0 } = self.strategy {
            panic!(
                "interleave_test::Builder: PCT depth 0 is meaningless; the depth counts the \
                 ordering constraints a bug needs, at least 1 (the default is {DEFAULT_PCT_DEPTH})"
            );
        }
        assert!(
            self.parallelism >= 1,
            "interleave_test::Builder: parallelism is 0, which would run no execution; use at \
             least 1 (1 runs executions one after another)"
        );
        assert!(
            self.watchdog != Some(Duration::ZERO),
            "interleave_test::Builder: a watchdog of 0 would report every model thread at once; \
             use None to turn it off, or a limit such as 10 s"
        );
        assert!(
            self.stack_size >= MIN_STACK_SIZE,
            "interleave_test::Builder: stack_size {} is below the minimum of {MIN_STACK_SIZE} \
             bytes, too little for any model thread; the default is {DEFAULT_STACK_SIZE}",
            self.stack_size
        );
        assert!(
            self.max_steps >= 1,
            "interleave_test::Builder: max_steps is 0, so no execution could take a step; use at \
             least 1 (the default is {DEFAULT_MAX_STEPS})"
        );
    }

    fn exec_config(&self) -> ExecConfig {
        let search = self.strategy.name().searches();
        ExecConfig {
            max_steps: self.max_steps,
            thread_panics_fail: self.thread_panics_fail,
            substrate: self.substrate,
            stack_size: self.stack_size,
            core: None,
            watchdog: self.watchdog,
            spins: if search && self.fair_spins {
                SpinRule::Repeats
            } else {
                SpinRule::Off
            },
            // Executions start untracked; one that needs tracking runs again tracked (under
            // DFS, the whole search does: see `driver::run_sequential`).
            untracked_start: true,
            spurious: self.spurious_wakeups,
            early_limit: search.then_some(1),
            clock: self.clock,
            check_acquires: search,
            keep_names: false,
            ambient: false,
            blocking_wait_switches: self.switch_before_waits,
            pass_at_max_steps: self.pass_at_max_steps,
        }
    }

    /// Runs the model under the strategy until an execution fails or `iterations` have
    /// passed. Executions run [`parallelism`](Self::parallelism) at a time, each on its own
    /// seed derived from the run's seed, so the result is the same whatever the parallelism:
    /// when several executions fail, the one with the lowest index is returned.
    #[track_caller]
    #[must_use = "a failure is returned, not raised: a test that ignores this result passes whatever the search found; use `explore`, or `.unwrap()` it, to fail on a failure"]
    pub fn check<F: Fn() + Sync>(&self, model: F) -> Result<Report, Failure> {
        crate::run::assert_not_in_model();
        crate::run::install_hook();
        self.validate();
        driver::run(&self.plan(), &model, Location::caller())
    }

    /// [`check`](Self::check) under a strategy of the caller's: `make` builds it (again
    /// when a search starts over with every execution tracked by the memory model) in place
    /// of the builder's [`strategy`](Self::strategy), on one driver thread; the other
    /// settings apply. The builder's strategy still says whether the run is a search (then
    /// it runs until `make`'s strategy has explored everything, unless `iterations` says
    /// otherwise) and is the name schedules record. The strategy is the engine's
    /// [`Strategy`] (`interleave_engine::strategy`, a dependency to name for it; a search
    /// also implements its `Exhaustive` hooks): not yet a stable interface.
    #[track_caller]
    #[must_use = "a failure is returned, not raised"]
    pub fn check_with_strategy<S, F>(
        &self,
        make: impl Fn() -> S + Sync,
        model: F,
    ) -> Result<Report, Failure>
    where
        S: Strategy + 'static,
        F: Fn() + Sync,
    {
        crate::run::assert_not_in_model();
        crate::run::install_hook();
        self.validate();
        let make = || -> Box<dyn Strategy> { Box::new(make()) };
        driver::run_sequential(&self.plan(), &make, None, &model, Location::caller())
    }

    pub(crate) fn plan(&self) -> Plan {
        let search = self.strategy.name().searches();
        let default = if search { u64::MAX } else { DEFAULT_ITERATIONS };
        Plan {
            exec: self.exec_config(),
            test: self.name.clone(),
            seed: self.seed,
            iterations: self.iterations.unwrap_or(default),
            max_time: self.max_time,
            parallelism: self.parallelism,
            progress: match (self.progress, env_flag(env::PROGRESS)) {
                (false, _) => ShowProgress::Off,
                (true, Some(true)) => ShowProgress::Anywhere,
                (true, _) => ShowProgress::OnTerminal,
            },
            reduction: search.then_some(self.reduction),
            strategy: self.strategy,
            corpus: self.regressions.clone(),
            #[cfg(test)]
            widening: match self.widen_at_once {
                true => driver::Widening::AT_ONCE,
                false => driver::Widening::DEFAULT,
            },
            #[cfg(not(test))]
            widening: driver::Widening::DEFAULT,
        }
    }

    /// Like [`check`](Self::check), but panics with the formatted failure. The schedule is
    /// saved to a file first, and the message ends with the way to replay it.
    #[track_caller]
    pub fn explore<F: Fn() + Sync>(&self, model: F) -> Report {
        match self.check(model) {
            Ok(report) => report,
            Err(failure) => panic!("{}", self.explain(&failure)),
        }
    }

    /// Runs one execution that follows `schedule` decision for decision. `Ok` when it passes;
    /// the failure it reproduces otherwise, equal to the original one. A schedule that does
    /// not fit the model gives a [`FailureKind::Divergence`](crate::FailureKind::Divergence)
    /// failure that names the decision.
    ///
    /// The settings the schedule recorded win over this builder's: its `max_steps`,
    /// `thread_panics_fail`, `spurious_wakeups`, `fair_spins` and [`clock`](Self::clock)
    /// (a file without `clock` ran on [`Clock::Loaded`]).
    #[track_caller]
    pub fn replay<F: Fn() + Sync>(&self, model: F, schedule: &Schedule) -> Result<(), Failure> {
        crate::run::assert_not_in_model();
        crate::run::install_hook();
        let (exec, meta) = self.replay_setup(schedule);
        if let Some(name) = &self.name
            && let Err(e) = schedule.check_test(name)
        {
            return Err(driver::schedule_mismatch(&e, meta));
        }
        let run = (exec, self.regressions.as_ref());
        driver::replay(run, &model, schedule, meta, Location::caller())
    }

    /// The panic message of [`explore`](Self::explore): the failure, where its schedule was
    /// saved, and how to replay it.
    fn explain(&self, failure: &Failure) -> String {
        format!(
            "{failure}\n\n{}",
            save_for_later(failure, self.name.as_deref())
        )
    }

    /// DFS, bounded by `INTERLEAVE_MAX_PREEMPTIONS` if set: the builder of [`model`](crate::model).
    pub(crate) fn dfs_from_env() -> Builder {
        let mut b = Builder::new();
        b.strategy = StrategyKind::Dfs {
            max_preemptions: env_bound(),
        };
        b
    }
}

/// One execution per core.
/// Asked once: std reads the cgroup files for it (tens of microseconds, as much as a whole
/// small exploration).
fn default_parallelism() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A seed that differs from run to run (std's hasher keys come from the OS).
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish()
}

/// Runs `model` with [`Builder::new`]'s settings; see [`Builder::check`].
#[track_caller]
#[must_use = "a failure is returned, not raised: a test that ignores this result passes whatever the search found; use `explore`, or `.unwrap()` it, to fail on a failure"]
pub fn check<F: Fn() + Sync>(model: F) -> Result<Report, Failure> {
    Builder::new().check(model)
}

/// Runs `model` with [`Builder::new`]'s settings and panics with the report if an execution
/// fails; see [`Builder::explore`].
#[track_caller]
pub fn explore<F: Fn() + Sync>(model: F) -> Report {
    Builder::new().explore(model)
}
/// Replays `schedule` on `model`; see [`Builder::replay`].
#[track_caller]
pub fn replay<F: Fn() + Sync>(model: F, schedule: &Schedule) -> Result<(), Failure> {
    Builder::new().replay(model, schedule)
}
