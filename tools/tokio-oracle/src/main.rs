//! The Tokio oracle: compiles Tokio's own integration tests, verbatim from the copy of the
//! `tokio` package cargo downloaded for the repository, against `interleave_test_tokio`
//! (through a shim crate named `tokio` as a dependency), runs each test alone in its own
//! process with a timeout, and writes a markdown table of what passed, failed, hung,
//! aborted or did not compile. `--real` runs the same files against real Tokio instead,
//! as a baseline.
//!
//! Everything it generates lives under `<target>/tokio-oracle/`; nothing of Tokio's is
//! copied into the repository.

mod compile;
mod generate;
mod reasons;
mod report;
mod run;
mod tokio_src;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The test files run by default: these prefixes and names, without `.rs`.
const DEFAULT_FILES: &[&str] = &[
    "sync_*",
    "task_abort",
    "task_join_set",
    "task_local",
    "task_local_set",
    "time_sleep",
    "time_timeout",
    "time_interval",
    "rt_common",
];

/// Which Tokio the test files are compiled against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `interleave_test_tokio`, through the shim.
    Model,
    /// `interleave_test_tokio` through the switch crate `interleave-tokio`, built with
    /// `--cfg interleave`, as a user's crate switches: Tokio's `io` and `net` are there too
    /// (not modelled), so files that import them compile.
    Switch,
    /// The real `tokio` package, the baseline.
    Real,
}

impl Flavor {
    /// The directory name of this flavor's generated crate and report.
    pub(crate) fn dir_name(self) -> &'static str {
        match self {
            Flavor::Model => "model",
            Flavor::Switch => "switch",
            Flavor::Real => "real",
        }
    }
}

/// The command line.
#[derive(Debug)]
pub(crate) struct Options {
    /// The repository root (holds the `interleave-test` package).
    pub(crate) repo: PathBuf,
    /// The cargo target directory the generated crates build into.
    pub(crate) target_dir: PathBuf,
    /// File name patterns (`name` or `prefix*`), without `.rs`.
    pub(crate) files: Vec<String>,
    /// Only tests whose full name contains this.
    pub(crate) test_filter: Option<String>,
    /// How long one test may run before it counts as hung.
    pub(crate) timeout: Duration,
    /// How many tests run at once.
    pub(crate) jobs: usize,
    /// Model or real Tokio.
    pub(crate) flavor: Flavor,
    /// `INTERLEAVE_SEED` of every test: the environment's, else 1, so that two runs of
    /// the same code give the same table.
    pub(crate) seed: String,
}

const USAGE: &str = "usage: tokio-oracle [--files a,b,sync_*] [--test SUBSTRING] \
[--timeout SECONDS] [--jobs N] [--real | --switch] [--repo PATH]";

/// Parses the command line; `Err` carries the message to print.
fn parse_options() -> Result<Options, String> {
    let default_repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut repo = default_repo;
    let mut files: Vec<String> = DEFAULT_FILES.iter().map(|s| s.to_string()).collect();
    let (mut test_filter, mut timeout, mut jobs, mut flavor) = (None, 60, 2, Flavor::Model);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--files" => files = value()?.split(',').map(str::to_string).collect(),
            "--test" => test_filter = Some(value()?),
            "--timeout" => timeout = value()?.parse().map_err(|e| format!("--timeout: {e}"))?,
            "--jobs" => jobs = value()?.parse().map_err(|e| format!("--jobs: {e}"))?,
            "--repo" => repo = PathBuf::from(value()?),
            "--real" => flavor = Flavor::Real,
            "--switch" => flavor = Flavor::Switch,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let repo = repo
        .canonicalize()
        .map_err(|e| format!("repository {}: {e}", repo.display()))?;
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    Ok(Options {
        repo,
        target_dir,
        files,
        test_filter,
        timeout: Duration::from_secs(timeout),
        jobs: jobs.max(1),
        flavor,
        seed: std::env::var("INTERLEAVE_SEED").unwrap_or_else(|_| "1".to_string()),
    })
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match oracle(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tokio-oracle: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Locates Tokio's tests, generates the crates, compiles, runs and reports.
fn oracle(options: &Options) -> Result<(), String> {
    let started = Instant::now();
    let tokio = tokio_src::locate(&options.repo)?;
    let files = tokio_src::select_files(&tokio, &options.files)?;
    eprintln!(
        "tokio {} at {}: {} test files",
        tokio.version,
        tokio.dir.display(),
        files.len()
    );
    let out_dir = options.target_dir.join("tokio-oracle");
    let crate_dir = generate::write_crates(options, &tokio, &files, &out_dir)?;
    let built = compile::build(options, &crate_dir, &files)?;
    let baseline = report::load_baseline(&out_dir);
    let (outcomes, listed) = run::run_all(options, &crate_dir, &files, &built, &baseline)?;
    let reasons = reasons::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reasons.txt"))?;
    let input = report::Input {
        flavor: options.flavor,
        tokio_version: &tokio.version,
        files: &files,
        built: &built,
        outcomes: &outcomes,
        reasons: &reasons,
        baseline: &baseline,
        wall: started.elapsed(),
        options,
    };
    let markdown = report::render(&input);
    print!("{markdown}");
    let name = match options.flavor {
        Flavor::Model => "report.md",
        Flavor::Switch => "report-switch.md",
        Flavor::Real => "report-real.md",
    };
    let path = out_dir.join(name);
    std::fs::write(&path, &markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    if options.flavor == Flavor::Real {
        report::save_baseline(&out_dir, &listed)?;
    }
    eprintln!("report written to {}", path.display());
    Ok(())
}
