//! Lists each compiled file's tests and runs every test alone (`--exact`) in its own
//! process, at most `jobs` at once, killing it at the timeout; classifies the outcome from
//! the exit status and the output, which goes to a log file per test.

use crate::Options;
use crate::compile::Built;
use crate::tokio_src::{self, TestFile};
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The regression corpus directory of the tests, in the generated crate.
const REGRESSIONS: &str = "interleave-regressions";

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// Exit status 0 and one test passed.
    Pass,
    /// It reported a failure.
    Fail,
    /// Killed at the timeout.
    Hang,
    /// Killed by a signal of its own (SIGABRT, SIGSEGV, ...).
    Abort,
    /// Its file did not compile.
    NotCompiled,
}

impl Status {
    /// The word in the report.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Hang => "hang",
            Status::Abort => "abort",
            Status::NotCompiled => "not compiled",
        }
    }
}

/// One test and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The file (test target) it is in.
    pub(crate) file: String,
    /// Its full name as libtest lists it (`module::name` for rt_common).
    pub(crate) name: String,
    /// `#[tokio::test]` (an `async fn`) rather than a plain `#[test]`.
    pub(crate) is_async: bool,
    /// How it ended.
    pub(crate) status: Status,
    /// One line: the panic message, the signal, or the compiler error.
    pub(crate) reason: String,
    /// How long it ran.
    pub(crate) elapsed: Duration,
}

/// One test to run.
#[derive(Debug)]
struct Job {
    file: String,
    name: String,
    is_async: bool,
    exe: PathBuf,
}

/// Every selected test's outcome, and the full listing of each compiled file.
pub(crate) type Results = (Vec<Outcome>, BTreeMap<String, Vec<String>>);

/// Runs the selected tests of every compiled file; files that did not compile give
/// `NotCompiled` outcomes, one per test of the baseline's listing (or of the source).
pub(crate) fn run_all(
    options: &Options,
    crate_dir: &Path,
    files: &[TestFile],
    built: &BTreeMap<String, Built>,
    baseline: &BTreeMap<String, Vec<String>>,
) -> Result<Results, String> {
    let mut jobs = VecDeque::new();
    let mut outcomes = Vec::new();
    let mut listed = BTreeMap::new();
    for file in files {
        let scan = tokio_src::scan(file);
        let entry = &built[&file.name];
        let names = match &entry.exe {
            Some(exe) => {
                let names = list_tests(exe, crate_dir)?;
                listed.insert(file.name.clone(), names.clone());
                names
            }
            None => baseline
                .get(&file.name)
                .cloned()
                .unwrap_or_else(|| scan.test_fns.clone()),
        };
        let selected = names.into_iter().filter(|n| selected(options, n));
        for name in selected {
            let is_async = scan.async_fns.contains(last_segment(&name));
            match &entry.exe {
                Some(exe) => jobs.push_back(Job {
                    file: file.name.clone(),
                    name,
                    is_async,
                    exe: exe.clone(),
                }),
                None => outcomes.push(Outcome {
                    file: file.name.clone(),
                    name,
                    is_async,
                    status: Status::NotCompiled,
                    reason: entry.first_error.clone().unwrap_or_default(),
                    elapsed: Duration::ZERO,
                }),
            }
        }
    }
    // Each run starts from an empty regression corpus, so a schedule stored by an earlier
    // run of other code is not replayed first: the table depends on the code and the seed.
    let _ = std::fs::remove_dir_all(crate_dir.join(REGRESSIONS));
    let logs = crate_dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    outcomes.extend(run_jobs(options, crate_dir, &logs, jobs));
    outcomes.sort_by(|a, b| (&a.file, &a.name).cmp(&(&b.file, &b.name)));
    Ok((outcomes, listed))
}

fn selected(options: &Options, name: &str) -> bool {
    options
        .test_filter
        .as_deref()
        .is_none_or(|f| name.contains(f))
}

fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// The test names `exe --list` prints.
fn list_tests(exe: &Path, crate_dir: &Path) -> Result<Vec<String>, String> {
    let output = Command::new(exe)
        .args(["--list", "--format", "terse"])
        .current_dir(crate_dir)
        .output()
        .map_err(|e| format!("{} --list: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

/// Runs `jobs` on `options.jobs` threads, printing a line per finished test.
fn run_jobs(options: &Options, crate_dir: &Path, logs: &Path, jobs: VecDeque<Job>) -> Vec<Outcome> {
    let total = jobs.len();
    let queue = Mutex::new(jobs);
    let results = Mutex::new(Vec::with_capacity(total));
    std::thread::scope(|scope| {
        for _ in 0..options.jobs {
            scope.spawn(|| {
                while let Some(job) = queue.lock().unwrap().pop_front() {
                    let outcome = run_one(&job, options, crate_dir, logs);
                    let mut results = results.lock().unwrap();
                    results.push(outcome.clone());
                    eprintln!(
                        "[{}/{total}] {}::{} {} ({:.1} s)",
                        results.len(),
                        outcome.file,
                        outcome.name,
                        outcome.status.word(),
                        outcome.elapsed.as_secs_f64()
                    );
                }
            });
        }
    });
    results.into_inner().unwrap()
}

/// Runs one test in its own process, output to `logs/<file>/<name>.log`.
fn run_one(job: &Job, options: &Options, crate_dir: &Path, logs: &Path) -> Outcome {
    let timeout = options.timeout;
    let log_path = logs
        .join(&job.file)
        .join(format!("{}.log", job.name.replace("::", "__")));
    let started = Instant::now();
    let (status, reason) = match spawn_and_wait(job, options, crate_dir, &log_path) {
        Ok(Some(exit)) => {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            classify(exit, &log)
        }
        Ok(None) => (
            Status::Hang,
            format!("no result within {} s", timeout.as_secs()),
        ),
        Err(e) => (Status::Fail, format!("could not run: {e}")),
    };
    Outcome {
        file: job.file.clone(),
        name: job.name.clone(),
        is_async: job.is_async,
        status,
        reason,
        elapsed: started.elapsed(),
    }
}

/// Starts the test and waits for it; `None` when it was killed at the timeout.
fn spawn_and_wait(
    job: &Job,
    options: &Options,
    crate_dir: &Path,
    log_path: &Path,
) -> std::io::Result<Option<ExitStatus>> {
    std::fs::create_dir_all(log_path.parent().unwrap_or(Path::new(".")))?;
    let log = File::create(log_path)?;
    let mut child = Command::new(&job.exe)
        .args([
            job.name.as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(crate_dir)
        .env("INTERLEAVE_SEED", &options.seed)
        .env("INTERLEAVE_REGRESSIONS", crate_dir.join(REGRESSIONS))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?;
    let deadline = Instant::now() + options.timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            child.kill()?;
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The status and one-line reason of a test that exited by itself.
fn classify(exit: ExitStatus, log: &str) -> (Status, String) {
    if let Some(signal) = exit.signal() {
        let message = first_message(log).unwrap_or_default();
        return (
            Status::Abort,
            format!(
                "{} ({}) after: {message}",
                signal_name(signal),
                last_line(log)
            ),
        );
    }
    if exit.success() && log.contains("test result: ok. 1 passed") {
        return (Status::Pass, String::new());
    }
    if exit.success() {
        return (
            Status::Fail,
            "exit status 0 but no test passed (ignored?)".to_string(),
        );
    }
    let reason = last_panic_message(log)
        .or_else(|| first_message(log))
        .unwrap_or_else(|| format!("exit status {}", exit.code().unwrap_or(-1)));
    (Status::Fail, reason)
}

/// The first line of the message of the last panic in `log` (the one that ended the
/// test; earlier panics may be expected ones the test caught).
fn last_panic_message(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("thread '") && l.contains("panicked at"))?;
    let message = lines.get(at + 1).copied().unwrap_or("").trim();
    Some(if message.is_empty() {
        lines[at].to_string()
    } else {
        message.to_string()
    })
}

/// The first line the test printed that is a message, not libtest's or a backtrace's
/// (the panic hook of the crate under test may print a message without a header).
fn first_message(log: &str) -> Option<String> {
    let mut lines = log.lines().skip_while(|l| !l.starts_with("test ")).skip(1);
    while let Some(line) = lines.next() {
        let is_noise = line.trim().is_empty()
            || line.starts_with(char::is_whitespace)
            || line.starts_with("stack backtrace:")
            || line.starts_with("note: ");
        if is_noise {
            continue;
        }
        if line.starts_with("thread '") && line.contains("panicked at") {
            return lines.next().map(|l| l.trim().to_string());
        }
        return Some(line.trim().to_string());
    }
    None
}

fn last_line(log: &str) -> String {
    log.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

fn signal_name(signal: i32) -> String {
    match signal {
        6 => "SIGABRT".to_string(),
        11 => "SIGSEGV".to_string(),
        4 => "SIGILL".to_string(),
        7 => "SIGBUS".to_string(),
        9 => "SIGKILL".to_string(),
        other => format!("signal {other}"),
    }
}
