//! `cargo interleave replay`: each schedule file replayed alone by the test that stored it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use interleave_test::{Build, env, protocol};

use crate::CliError;
use crate::args::ReplayArgs;
use crate::cargo::{self, TestBinaries, TestBinary};
use crate::collect::{self, ScheduleFile};
use crate::outcome::{Outcome, Summary, read_verdict};

/// Replays every file the arguments name, printing one line per file and a summary.
/// Returns whether every file is fixed or diverged.
pub(crate) fn run(args: &ReplayArgs) -> Result<bool, CliError> {
    let found = collect::collect(&args.paths)?;
    let files = collect::load(found, args.test.as_deref(), args.file.as_deref());
    if files.is_empty() {
        eprintln!("cargo-interleave: no schedule file matches");
    }
    let builds = build_each(&files, args)?;
    let mut summary = Summary::default();
    for file in &files {
        let binaries = &builds[&key(file.build)];
        let (outcome, output) = replay_file(file, binaries);
        println!("{}", outcome.line(&file.path));
        let fixed = matches!(outcome, Outcome::Fixed { .. });
        if let Some(output) = output.filter(|_| args.verbose && !fixed) {
            print_indented(&output);
        }
        summary.add(&outcome);
    }
    println!("{summary}");
    Ok(summary.all_pass())
}

/// A recorded build, as a map key: the `interleave` cfg, then the profile.
type BuildKey = (Option<bool>, Option<bool>);

fn key(build: Build) -> BuildKey {
    (build.cfg_interleave(), build.release())
}

/// The test binaries for each build the files recorded, each built once (a build none of
/// whose files can be replayed is not built).
fn build_each(
    files: &[ScheduleFile],
    args: &ReplayArgs,
) -> Result<BTreeMap<BuildKey, TestBinaries>, CliError> {
    let mut builds = BTreeMap::new();
    for file in files {
        if builds.contains_key(&key(file.build)) {
            continue;
        }
        let wanted = files
            .iter()
            .any(|f| key(f.build) == key(file.build) && f.test.is_ok());
        let binaries = if wanted {
            let switches = cargo::switches(file.build, &args.build);
            cargo::build_tests(args.manifest_path.as_deref(), &switches)?
        } else {
            TestBinaries::default()
        };
        builds.insert(key(file.build), binaries);
    }
    Ok(builds)
}

/// Replays one file; also returns the test's output when the test ran.
fn replay_file(file: &ScheduleFile, binaries: &TestBinaries) -> (Outcome, Option<Output>) {
    let test = match &file.test {
        Ok(test) => test,
        Err(reason) => {
            let reason = reason.clone();
            return (Outcome::Invalid { reason }, None);
        }
    };
    let Some((krate, name)) = cargo::split_test_path(test) else {
        let reason = format!(
            "its test `{test}` is not a path `<crate>::<test>`; only schedules stored by \
             #[interleave] tests can be replayed by cargo interleave"
        );
        return (Outcome::Invalid { reason }, None);
    };
    let Some(binary) = binaries.find(krate, &file.path) else {
        let test = test.clone();
        return (Outcome::Missing { test }, None);
    };
    match run_test(binary, name, &file.path) {
        Ok(output) => (read_output(&output, test, name, &file.path), Some(output)),
        Err(reason) => (Outcome::Invalid { reason }, None),
    }
}

/// Runs test `name` of `binary` alone, from its package root, replaying `file`. `name`
/// comes from the file, checked by `Schedule::test_path` to be a path of identifiers, so
/// libtest takes it as its filter, never as an option; `--exact` keeps it from matching
/// other tests whose names it is a part of.
fn run_test(binary: &TestBinary, name: &str, file: &Path) -> Result<Output, String> {
    if name.starts_with('-') {
        return Err(format!(
            "test name `{name}` would be read as an option; not run"
        ));
    }
    let file = std::fs::canonicalize(file)
        .map_err(|e| format!("cannot resolve {}: {e}", file.display()))?;
    Command::new(&binary.exe)
        .args([name, "--exact", "--nocapture", "--include-ignored"])
        .env(env::REPLAY, &file)
        .env(env::PROTOCOL, protocol::VERSION.to_string())
        .current_dir(&binary.root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.exe.display()))
}

/// The outcome the test's output reports for `file` (`test` is its full path, `name` its
/// libtest name).
fn read_output(output: &Output, test: &str, name: &str, file: &Path) -> Outcome {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let replayed = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    if let Some(outcome) = read_verdict(&stdout, &replayed) {
        return outcome;
    }
    if stdout.lines().any(|l| l.trim() == "running 0 tests") {
        return Outcome::Missing {
            test: test.to_owned(),
        };
    }
    Outcome::Invalid {
        reason: format!(
            "test `{name}` ran but printed no verdict for the schedule ({}); is it an \
             #[interleave] test or a test calling model(), built with the interleave-test \
             version of this cargo-interleave (protocol {})? (--verbose shows its output)",
            output.status,
            protocol::VERSION
        ),
    }
}

/// Prints a test's output under its line, indented, without blank lines and the replay line.
fn print_indented(output: &Output) {
    let text = [&output.stdout, &output.stderr]
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        .join("\n");
    let shown = |l: &&str| !l.trim().is_empty() && !l.starts_with(protocol::PREFIX);
    for line in text.lines().filter(shown) {
        println!("    {line}");
    }
}
