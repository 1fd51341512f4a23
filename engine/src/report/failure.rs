//! [`Failure`]: a failing execution as a value, and its human-readable form.

use std::fmt;

use super::{SourceLocation, ThreadInfo, ThreadReport, TimerFiring};
use crate::schedule::FailureKind;
use crate::schedule::Schedule;

/// How many of the last decisions a failure keeps for its report.
pub(crate) const RECENT_DECISIONS: usize = 20;

/// How many of the early timer firings a failure's report shows (the last ones; the value
/// keeps them all).
const SHOWN_FIRINGS: usize = 5;

/// One of the last decisions before a failure: which thread was chosen and what it did next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecentStep {
    pub(crate) step: u64,
    pub(crate) thread: ThreadInfo,
    pub(crate) op: String,
    pub(crate) location: SourceLocation,
}

impl RecentStep {
    /// The switch point (counted from 1 in the execution) where the decision was made.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The thread chosen to run.
    pub fn thread(&self) -> &ThreadInfo {
        &self.thread
    }

    /// The operation it was about to perform, e.g. `mutex lock`; for an operation of a
    /// Tokio primitive, the method the program called, e.g. `tokio mpsc send` (its schedule
    /// decision keeps the kind of the mechanism under it, `mutex lock`, which replay
    /// compares).
    pub fn op(&self) -> &str {
        &self.op
    }

    /// Where, in the user's code.
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }
}

/// A failing execution: what went wrong, where, and the schedule that replays it.
///
/// Two failures compare equal when everything but the backtrace and the substrate is equal:
/// a replay of a failure's schedule, on either substrate, gives a failure equal to the
/// original.
#[derive(Clone, Debug)]
pub struct Failure {
    pub(crate) kind: FailureKind,
    pub(crate) message: String,
    pub(crate) thread: Option<ThreadInfo>,
    pub(crate) location: Option<SourceLocation>,
    pub(crate) threads: Vec<ThreadReport>,
    pub(crate) recent: Vec<RecentStep>,
    pub(crate) timers: Vec<TimerFiring>,
    pub(crate) schedule: Schedule,
    pub(crate) iteration: u64,
    pub(crate) backtrace: Option<backtrace::Backtrace>,
    pub(crate) substrate: crate::settings::Substrate,
}

impl PartialEq for Failure {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.message == other.message
            && self.thread == other.thread
            && self.location == other.location
            && self.threads == other.threads
            && self.recent == other.recent
            && self.timers == other.timers
            && self.schedule == other.schedule
            && self.iteration == other.iteration
    }
}

impl Eq for Failure {}

impl Failure {
    /// What ran the model threads when it was found.
    pub fn substrate(&self) -> crate::settings::Substrate {
        self.substrate
    }

    /// What went wrong.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The first line of the report: the panic message, or what the deadlock, livelock,
    /// divergence or misuse was.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The thread that failed: the one that panicked, the last to block in a deadlock, the
    /// one running when the step limit hit.
    pub fn thread(&self) -> Option<&ThreadInfo> {
        self.thread.as_ref()
    }

    /// Where it failed in the user's code.
    pub fn location(&self) -> Option<&SourceLocation> {
        self.location.as_ref()
    }

    /// For a deadlock, every live thread with what it waits for and who holds it; for a
    /// livelock, the threads that kept running.
    pub fn threads(&self) -> &[ThreadReport] {
        &self.threads
    }

    /// The last decisions (at most 20) before the failure, oldest first.
    pub fn recent(&self) -> &[RecentStep] {
        &self.recent
    }

    /// The timers and timed waits the search ended early in the failing execution (on the
    /// loaded clock, while other threads could still act), in order: each names the call
    /// that made it (`tokio::time::timeout` at `src/lib.rs:42:9`) and its deadline. Empty
    /// if none did, as always under `Clock::Paused`.
    pub fn early_timers(&self) -> &[TimerFiring] {
        &self.timers
    }

    /// The schedule that replays this failure.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The seed of the strategy that found it, if it uses one.
    pub fn seed(&self) -> Option<u64> {
        self.schedule.seed()
    }

    /// Which execution of the run failed, from 0.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// The failing thread's backtrace (panics only), resolved to symbols.
    pub fn backtrace(&self) -> Option<String> {
        let mut bt = self.backtrace.clone()?;
        bt.resolve();
        Some(user_frames(&bt))
    }
}

/// The frames of `bt` that belong to the model: after the panic machinery, before the
/// runtime that called the thread's body.
fn user_frames(bt: &backtrace::Backtrace) -> String {
    let mut out = String::new();
    let mut started = false;
    for sym in bt.frames().iter().flat_map(|f| f.symbols()) {
        let name = sym.name().map(|n| format!("{n:#}")).unwrap_or_default();
        if is_machinery(&name, sym.filename()) {
            if started {
                break; // the runtime that ran the body: the rest is not the model's
            }
            continue;
        }
        started = true;
        out.push_str(&format!("  {name}\n"));
        if let (Some(file), Some(line)) = (sym.filename(), sym.lineno()) {
            out.push_str(&format!("      at {}:{line}\n", file.display()));
        }
    }
    out
}

/// Whether a frame named `name`, in `file` if known, is the panic machinery or this crate's
/// runtime rather than the model's code. By name when it has its path (`std::panicking::..`);
/// by file too, since a build with `debug = "line-tables-only"` names frames without their
/// paths (`record`, `{closure#0}`): the standard library's files (under `/rustc/`), the
/// engine's and the facade's, and those of the crates it runs threads on.
fn is_machinery(name: &str, file: Option<&std::path::Path>) -> bool {
    const MACHINERY: [&str; 9] = [
        "std::",
        "generator::",
        "core::",
        "alloc::",
        "backtrace::",
        "interleave_test::",
        "interleave_engine::",
        "rust_begin_unwind",
        "__rust",
    ];
    let by_name = name.is_empty()
        || MACHINERY
            .iter()
            .any(|m| name.starts_with(m) || name.starts_with(&format!("<{m}")));
    by_name || file.is_some_and(is_machinery_file)
}

/// Whether `file` is the standard library's, the engine's, the facade's or the Tokio
/// crate's, or a source file of the crates under the runtime (`generator-0.8.11/src/..` in
/// Cargo's registry). The facade's `src/` is found two ways: published, the crates are
/// folders of Cargo's registry (`interleave-test-0.1.0`); in the workspace, the engine's
/// folder is inside the facade's, beside the Tokio crate's.
fn is_machinery_file(file: &std::path::Path) -> bool {
    let engine = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = engine.parent();
    let facade = root.map(|root| root.join("src"));
    let tokio = root.map(|root| root.join("interleave-test-tokio/src"));
    file.starts_with(engine.join("src"))
        || facade.is_some_and(|src| file.starts_with(src))
        || tokio.is_some_and(|src| file.starts_with(src))
        || file.starts_with("/rustc")
        || file.components().any(|c| {
            let c = c.as_os_str().to_string_lossy();
            const CRATES: [&str; 5] = [
                "generator-",
                "backtrace-",
                "interleave-test-",
                "interleave-test-tokio-",
                "interleave-engine-",
            ];
            CRATES.iter().any(|dep| {
                c.strip_prefix(dep)
                    .is_some_and(|v| v.starts_with(|d: char| d.is_ascii_digit()))
            })
        })
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interleave-test found a {}: {}", self.kind, self.message)?;
        match (&self.thread, &self.location) {
            (Some(t), l) if t.local_task().is_some() => {
                let task = t.local_task().expect("matched");
                write!(f, "\n  in {task}, polled by {} {t}", t.kind())?;
                if let Some(l) = l {
                    write!(f, ", at {l}")?;
                }
            }
            (Some(t), Some(l)) => write!(f, "\n  in {} {t} at {l}", t.kind())?,
            (Some(t), None) => write!(f, "\n  in {} {t}", t.kind())?,
            (None, Some(l)) => write!(f, "\n  at {l}")?,
            (None, None) => {}
        }
        for t in &self.threads {
            write!(f, "\n  {t}")?;
        }
        if !self.recent.is_empty() {
            let total = self.schedule.decisions().len();
            write!(
                f,
                "\n\nlast {} decisions (of {total}), oldest first, numbered as in the schedule \
                 (a thread's picks join the line where it was chosen):",
                self.recent.len(),
            )?;
            let first = total - self.recent.len() + 1;
            for (n, s, op) in by_step(&self.recent) {
                write!(
                    f,
                    "\n  {:>5}  {:<16} {:<22} {}",
                    first + n,
                    s.thread.to_string(),
                    op,
                    s.location
                )?;
            }
        }
        self.fmt_timers(f)?;
        if let Some(bt) = self.backtrace()
            && !bt.is_empty()
        {
            write!(
                f,
                "\n\nbacktrace of thread {}:\n{}{}",
                self.thread
                    .as_ref()
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
                bt.trim_end(),
                no_lines_note(&bt)
            )?;
        }
        write!(f, "\n\nfound by the {} strategy", self.schedule.strategy())?;
        if let Some(seed) = self.seed() {
            write!(f, ", seed {seed}")?;
        }
        write!(
            f,
            ", execution {} of the run, on {}",
            self.iteration, self.substrate
        )
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// The report's section on the timers that fired early, if any did: the last few.
    fn fmt_timers(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.timers.is_empty() {
            return Ok(());
        }
        let first = self.timers.len().saturating_sub(SHOWN_FIRINGS);
        write!(
            f,
            "\n\ntimers that fired early, on the loaded clock (under `Clock::Paused` a timer fires \
             only when every thread waits):"
        )?;
        if first > 0 {
            write!(f, "\n  ({first} earlier not shown)")?;
        }
        for t in &self.timers[first..] {
            write!(
                f,
                "\n  step {}, {} {}: {t}",
                t.step,
                t.thread.kind(),
                t.thread
            )?;
        }
        Ok(())
    }
}

/// A note under a backtrace whose frames have no `file:line` (an optimized build without
/// line tables): where the locations are, and how to get them. Empty otherwise.
fn no_lines_note(frames: &str) -> &'static str {
    if frames.lines().any(|l| l.trim_start().starts_with("at ")) {
        return "";
    }
    "\n  (no file:line in this build's backtrace; the locations above, of the failure and of \
     each decision, are recorded without it. For lines here, add `debug = \"line-tables-only\"` \
     to [profile.release])"
}

/// The decisions, a line each, with their index among `recent`; a thread's picks at the
/// step where it was chosen (which store its load reads, ...) join that line. A pick's `op`
/// is `<operation>, <pick> <n> of <m>`: the line shows the operation once, then each pick.
fn by_step(recent: &[RecentStep]) -> Vec<(usize, &RecentStep, String)> {
    let name = |op: &str| op.split_once(", ").map_or(op, |(name, _)| name).to_owned();
    let mut lines: Vec<(usize, &RecentStep, String)> = Vec::new();
    for (i, s) in recent.iter().enumerate() {
        match lines.last_mut() {
            Some((_, first, op)) if first.step == s.step && first.thread == s.thread => {
                match s.op.split_once(", ") {
                    Some((of, pick)) if of == name(op) => op.push_str(&format!(", {pick}")),
                    _ => op.push_str(&format!("; {}", s.op)),
                }
            }
            _ => lines.push((i, s, s.op.clone())),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::{is_machinery, no_lines_note};
    use std::path::Path;

    #[test]
    fn machinery_frames_are_told_by_their_path_or_by_their_file() {
        // Full debug information: names carry their paths.
        assert!(is_machinery("std::panicking::begin_panic", None));
        assert!(is_machinery("<core::fmt::Arguments as X>::f", None));
        assert!(is_machinery(
            "interleave_test::runtime::panic::record",
            None
        ));
        assert!(!is_machinery("my_tests::split_increment", None));
        // Line tables only: bare names, told apart by their files.
        let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime/panic.rs");
        assert!(is_machinery("record", Some(&own)));
        let std = Path::new("/rustc/5980761/library/std/src/panicking.rs");
        assert!(is_machinery("begin_panic_handler", Some(std)));
        let dep = Path::new("/home/u/.cargo/registry/src/index/generator-0.8.11/src/gen_impl.rs");
        assert!(is_machinery("resume_gen", Some(dep)));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let facade = root.join("src/sync/mutex.rs");
        assert!(is_machinery("lock", Some(&facade)));
        let published = Path::new("/home/u/.cargo/registry/src/i/interleave-test-0.1.0/src/a.rs");
        assert!(is_machinery("lock", Some(published)));
        let tests = root.join("tests/primitives/panics.rs");
        assert!(!is_machinery("split_increment", Some(&tests)));
        let tokio = Path::new("/home/u/.cargo/registry/src/i/interleave-tokio-0.1.0/src/a.rs");
        assert!(!is_machinery("spawn", Some(tokio)));
        let user = Path::new("/home/u/generator-tests/src/lib.rs");
        assert!(!is_machinery("{closure#0}", Some(user)));
    }

    #[test]
    fn a_backtrace_without_lines_says_where_they_are() {
        let with = "  my::model\n      at src/lib.rs:9\n";
        assert_eq!(no_lines_note(with), "");
        let without = "  my::model\n  my::helper\n";
        let note = no_lines_note(without);
        assert!(note.contains("no file:line in this build"), "{note}");
        assert!(note.contains("line-tables-only"), "{note}");
    }
}
