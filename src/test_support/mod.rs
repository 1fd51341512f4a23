//! What an `#[interleave]` test runs, and [`model`] inside a test: its stored schedules
//! first (judged in `stored.rs`), then the exploration. A new failure is stored in the
//! test's regression corpus and reported with the way to replay it. `INTERLEAVE_REPLAY`
//! judges one file instead, in the test that file names; every other test explores as usual.

mod stored;

use std::io::Write as _;
use std::path::Path;

use crate::config::{self, Builder};
use crate::corpus::Corpus;
use crate::report::Failure;
use crate::schedule::{Build, Schedule};
use crate::settings::{self, env};
use crate::settings::{Clock, StrategyKind};
use crate::summary::Report;

/// The settings `#[interleave(...)]` gives a test. Not public API: built by the macro.
#[derive(Clone, Debug)]
pub struct TestSpec {
    /// `module_path!()` and the function name: the test's full path.
    pub name: &'static str,
    /// `CARGO_MANIFEST_DIR` of the crate the test is in: the corpus lives below it.
    pub manifest_dir: &'static str,
    /// `iterations = N`.
    pub iterations: Option<u64>,
    /// `seed = N`.
    pub seed: Option<u64>,
    /// `max_steps = N`.
    pub max_steps: Option<u64>,
    /// `strategy = "..."`, with `depth` or `max_preemptions`.
    pub strategy: Option<StrategyKind>,
    /// `partial = true|false`: whether a DFS search that did not finish passes.
    pub partial: Option<bool>,
    /// `clock = "loaded"|"paused"`: how the virtual clock moves.
    pub clock: Option<Clock>,
    /// `cfg!(interleave)` in the test's crate: the README's switch.
    pub cfg_interleave: bool,
    /// Whether the test's crate is an optimized build (`debug_assertions` off).
    pub release: bool,
}

/// A test the crate runs for its user: its full path (crate first), the name libtest knows
/// it by, and where its failures are stored.
struct Test {
    name: String,
    libtest: String,
    corpus: Option<Corpus>,
    /// How the test binary is built, as the test knows it.
    build: Build,
}

/// How a test's run ended, when it did not fail.
enum Ran {
    /// It explored, with this report.
    Explored(Report),
    /// It replayed the file `INTERLEAVE_REPLAY` names.
    Replayed,
}

/// Runs the test `spec` on `model`; panics (fails the test) with the report of a failure, or
/// when a DFS search did not finish and partial searches are not allowed
/// (`INTERLEAVE_PARTIAL`, else the attribute's `partial`).
#[track_caller]
pub fn run_test<F: Fn() + Sync>(spec: &TestSpec, model: F) {
    let builder = builder_for(spec);
    let test = Test {
        name: spec.name.to_owned(),
        libtest: spec
            .name
            .split_once("::")
            .map_or(spec.name, |(_, rest)| rest)
            .to_owned(),
        corpus: Some(Corpus::new(
            &settings::regressions_root(spec.manifest_dir),
            spec.name,
        )),
        build: crate::schedule::build(spec.cfg_interleave, spec.release),
    };
    if let Ran::Explored(report) = run(&builder, &model, &test) {
        summarize(&test, &report);
        let unfinished = builder.strategy.name().searches() && !report.exhausted;
        let partial = settings::env_flag(env::PARTIAL).or(spec.partial);
        if unfinished && partial != Some(true) {
            panic!(
                "interleave-test: the dfs search of {} did not finish, so nothing is proved:\n\
                 {report}\nRaise or unset {} and {}, or bound the search (max_preemptions). To \
                 accept a partial search, write `partial = true` in the #[interleave] attribute, \
                 or set {}=1 (for every test, e.g. in a capped CI run){}.",
                test.name,
                env::ITERATIONS,
                env::MAX_TIME,
                env::PARTIAL,
                match settings::env_flag(env::PARTIAL) {
                    Some(false) => format!("; {}=0 is set now", env::PARTIAL),
                    _ => String::new(),
                }
            );
        }
    }
}

/// Checks every schedule of `model`, as loom's `model` does: a DFS search with partial-order
/// reduction, bounded by `INTERLEAVE_MAX_PREEMPTIONS` if set, until it has explored every
/// class of schedules. Panics with the formatted failure if an execution fails, and panics
/// too if the search could not finish (`INTERLEAVE_ITERATIONS` or `INTERLEAVE_MAX_TIME` set
/// too low): a proof that stopped half-way is not one, unless `INTERLEAVE_PARTIAL=1` accepts
/// partial searches, as it does for `#[interleave]` tests (then the report says `NOT
/// EXHAUSTED` and why). Returns the report, whose `Display` is the proof statement for a CI
/// log.
///
/// Inside a test run by cargo, it works like an `#[interleave]` test named after the test
/// (libtest's name for the thread, after the test binary's crate): a failing schedule is
/// stored in the crate's regression corpus, one file per failure, and replayed first on
/// later runs; `INTERLEAVE_REPLAY` replays a file recorded for this test (then the report
/// counts one execution and is not exhausted). Outside a test, the schedule is saved in the
/// temporary directory, in a file of its own.
///
/// ```
/// use interleave_test::sync::atomic::{AtomicUsize, Ordering};
/// use interleave_test::sync::Arc;
/// use interleave_test::thread;
///
/// let report = interleave_test::model(|| {
///     let n = Arc::new(AtomicUsize::new(0));
///     let n2 = Arc::clone(&n);
///     let t = thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst));
///     n.fetch_add(1, Ordering::SeqCst);
///     t.join().unwrap();
///     assert_eq!(n.load(Ordering::SeqCst), 2);
/// });
/// assert!(report.exhausted);
/// ```
#[track_caller]
pub fn model<F: Fn() + Sync>(f: F) -> Report {
    let builder = Builder::dfs_from_env();
    let Some(test) = current_test() else {
        return exhaustive(builder.explore(f));
    };
    let builder = builder.name(&test.name);
    match run(&builder, &f, &test) {
        Ran::Explored(report) => {
            summarize(&test, &report);
            exhaustive(report)
        }
        Ran::Replayed => Report::replayed(builder.substrate),
    }
}

/// [`model`] for an async model: `f` makes the future that each execution runs to
/// completion under [`future::block_on`](crate::future::block_on) on the model's main
/// thread, as `#[interleave]` on an `async fn` does.
///
/// ```
/// use interleave_test::future;
///
/// let report = interleave_test::model_async(|| async {
///     let task = future::spawn(async { 1 });
///     assert_eq!(task.await.unwrap(), 1);
/// });
/// assert!(report.exhausted);
/// ```
#[track_caller]
pub fn model_async<F, Fut>(f: F) -> Report
where
    F: Fn() -> Fut + Sync,
    Fut: std::future::Future<Output = ()>,
{
    let loc = std::panic::Location::caller();
    model(|| crate::future::block_on_at(f(), loc))
}

/// The builder of an `#[interleave]` test: the attribute's values, except where an
/// environment variable is set (it wins, so CI can turn a knob for every test).
fn builder_for(spec: &TestSpec) -> Builder {
    let mut b = Builder::new().name(spec.name);
    let root = settings::regressions_root(spec.manifest_dir);
    b.regressions = Some(Corpus::new(&root, spec.name));
    let pick = |var: &str, value: Option<u64>| value.filter(|_| !settings::env_is_set(var));
    if let Some(n) = pick(env::ITERATIONS, spec.iterations) {
        b = b.iterations(n);
    }
    if let Some(n) = pick(env::SEED, spec.seed) {
        b = b.seed(n);
    }
    if let Some(n) = pick(env::MAX_STEPS, spec.max_steps) {
        b = b.max_steps(n);
    }
    if let Some(s) = spec
        .strategy
        .filter(|_| !settings::env_is_set(env::STRATEGY))
    {
        b = b.strategy(s);
    }
    if let Some(clock) = spec.clock.filter(|_| !settings::env_is_set(env::CLOCK)) {
        b = b.clock(clock);
    }
    b
}

/// `report`, if its search finished or `INTERLEAVE_PARTIAL=1` accepts a partial one (as
/// for an `#[interleave]` test); a panic that says what to do otherwise.
fn exhaustive(report: Report) -> Report {
    let partial = settings::env_flag(env::PARTIAL);
    if !report.exhausted && partial != Some(true) {
        panic!(
            "interleave_test::model could not finish the search, so nothing is proved:\n{report}\n\
             Unset or raise {} and {}, or bound the search with {}. To accept a partial search, \
             set {}=1 (for every test, e.g. in a capped CI run){}.",
            env::ITERATIONS,
            env::MAX_TIME,
            env::MAX_PREEMPTIONS,
            env::PARTIAL,
            match partial {
                Some(false) => format!("; {}=0 is set now", env::PARTIAL),
                _ => String::new(),
            }
        );
    }
    report
}

/// The test this thread runs, as libtest names its threads, with the crate's corpus if the
/// test runs under cargo (`CARGO_MANIFEST_DIR`); `None` outside a test.
fn current_test() -> Option<Test> {
    let current = std::thread::current();
    let libtest = current.name().filter(|n| *n != "main")?.to_owned();
    // A test binary is named after its crate, then `-` and a hash.
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_str()?;
    let krate = stem
        .rsplit_once('-')
        .map_or(stem, |(k, _)| k)
        .replace('-', "_");
    let name = format!("{krate}::{libtest}");
    let corpus = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| Corpus::new(&settings::regressions_root(&dir.to_string_lossy()), &name));
    Some(Test {
        name,
        libtest,
        corpus,
        // The test's crate is built with the same RUSTFLAGS and, as a rule, the same
        // profile as this one.
        build: crate::schedule::build(cfg!(interleave), !cfg!(debug_assertions)),
    })
}

/// Replays `INTERLEAVE_REPLAY` if it names `test`; otherwise the test's stored schedules,
/// then explores. Panics with the report of a failure, after storing its schedule.
#[track_caller]
fn run<F: Fn() + Sync>(builder: &Builder, model: &F, test: &Test) -> Ran {
    if let Some(path) = settings::replay_file()
        && let Some(schedule) = replay_target(&path, test)
    {
        stored::judge_one(builder, model, &path, &schedule, test);
        return Ran::Replayed;
    }
    if let Some(corpus) = &test.corpus {
        stored::judge_corpus(builder, model, corpus, test);
    }
    match builder.check(model) {
        Ok(report) => Ran::Explored(report),
        Err(failure) => panic!("{failure}\n\n{}", store(&failure, test)),
    }
}

/// Where the failure's schedule went, and how to replay it.
fn store(failure: &Failure, test: &Test) -> String {
    let schedule = crate::schedule::with_build(failure.schedule().clone(), test.build);
    let Some(corpus) = &test.corpus else {
        return saved_outside_cargo(&schedule, test);
    };
    match corpus.store(&schedule) {
        Ok((path, new)) => {
            let shown = path.display();
            let stored = if new {
                format!(
                    "the schedule is stored in {shown} (commit it: every later run replays it \
                     first)"
                )
            } else {
                format!("the schedule was stored already, in {shown}")
            };
            format!("{stored}\n{}", how_to_replay(&path, test))
        }
        Err(e) => format!("the schedule could not be stored in the regression corpus ({e})"),
    }
}

/// The two commands that replay `path`, as they must be typed at the crate root.
/// `cargo interleave` reads the test's build (the README's `--cfg interleave` switch, an
/// optimized build) from the file; the `cargo test` line carries them, and the test target,
/// so that the test exists and runs as it did. Features are not known at run time: the last
/// line says how to add them.
fn how_to_replay(path: &Path, test: &Test) -> String {
    let rustflags = if test.build.cfg_interleave() == Some(true) {
        "RUSTFLAGS=\"--cfg interleave\" "
    } else {
        ""
    };
    let release = if test.build.release() == Some(true) {
        " --release"
    } else {
        ""
    };
    format!(
        "replay it: cargo interleave replay {path}\n       \
         or: {var}={path} {rustflags}cargo test{release}{target} -- --exact {name}\n\
         (a test behind a feature needs it named: add --features <F> after `replay` or `test`)",
        path = path.display(),
        var = env::REPLAY,
        target = test_target(&test.name),
        name = test.libtest,
    )
}

/// Where the schedule of a failure in a test run outside cargo (no crate, so no corpus)
/// went: a file of its own in the temporary directory, and the command that replays it
/// with this very test binary.
fn saved_outside_cargo(schedule: &Schedule, test: &Test) -> String {
    let path = config::saved_schedule_path(Some(&test.name), schedule);
    if let Err(e) = schedule.save(&path) {
        return format!(
            "the schedule could not be saved ({e}); print failure.schedule().to_json() to keep it"
        );
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "<this test binary>".to_owned());
    format!(
        "the schedule is saved in {path}\nreplay it: {var}={path} {exe} --exact {name}",
        path = path.display(),
        var = env::REPLAY,
        name = test.libtest,
    )
}

/// ` --test <target>` when the test's crate is an integration test of the package cargo runs
/// (`tests/<target>.rs` or `tests/<target>/main.rs`); empty otherwise (every target then
/// runs the one test the filter names).
fn test_target(name: &str) -> String {
    let krate = name.split("::").next().unwrap_or(name);
    let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return String::new();
    };
    let tests = Path::new(&root).join("tests");
    let named = [krate.to_owned(), krate.replace('_', "-")];
    named
        .iter()
        .find(|t| {
            tests.join(format!("{t}.rs")).is_file() || tests.join(t).join("main.rs").is_file()
        })
        .map(|t| format!(" --test {t}"))
        .unwrap_or_default()
}

/// The schedule `INTERLEAVE_REPLAY` names, if it is for `test` (or names no test); `None`
/// if it names another test, which this one leaves alone. A file that cannot be read fails
/// every test that looks at it.
fn replay_target(path: &Path, test: &Test) -> Option<Schedule> {
    let schedule = match Schedule::load(path) {
        Ok(s) => s,
        Err(e) => {
            stored::invalid(path, &e.to_string());
            panic!("interleave-test: {e}");
        }
    };
    match schedule.test() {
        Some(other) if other != test.name => None,
        _ => Some(schedule),
    }
}

/// Writes `line` to the process's standard error itself, past libtest's capture: what a
/// passing test should still show.
fn visible(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// With `INTERLEAVE_SUMMARY=1`, shows the test's report even when it passes.
fn summarize(test: &Test, report: &Report) {
    if settings::env_flag(env::SUMMARY) == Some(true) {
        visible(&format!("interleave-test: {}: {report}", test.name));
    }
}
