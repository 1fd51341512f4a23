//! End to end: `cargo interleave replay` on the fixture crate `tests/fixtures/cli_fixture`,
//! whose committed corpus holds a deadlock that still happens (a unit test), a lost update
//! that still happens and a schedule whose test was fixed since (an integration test).
//!
//! Each test works on a copy of the fixture under `CARGO_TARGET_TMPDIR` (so runs never touch
//! the repository), whose dependency points at this repository. The fixture builds share
//! `target/cli-fixture`: the first run compiles interleave-test once more (a minute or so),
//! later runs only the fixture.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::fixture::{self, repo};

const DEADLOCK: &str =
    "interleave-regressions/cli_fixture/tests/opposite_lock_order/51cef117f81654e5.json";
const FIXED: &str = "interleave-regressions/cli_fixture_tests/fixed/28c6a01fb8885446.json";
const RACY: &str = "interleave-regressions/cli_fixture_tests/racy/322245a303443805.json";
/// How much the verdict on `FIXED` rests on: its whole schedule fits and passes, and so do
/// the executions around it.
const FIXED_DETAIL: &str = "200 executions pass: the first follows the 5 of its 5 decisions \
                            that fit, the others a random part of those, then all decide at \
                            random";
/// What `missing` lines add after the test's name.
const FEATURE_HINT: &str = "(a test behind a feature needs it named: --features <F>)";

/// `target/cli-fixture` under this repository's target directory.
fn fixture_target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent()
        .expect("CARGO_TARGET_TMPDIR is below the target directory")
        .join("cli-fixture")
}

/// A fresh copy of the fixture at `<CARGO_TARGET_TMPDIR>/cli-fixture/<name>`, depending on
/// this repository and locked like it (so building it needs no registry).
fn fixture_copy(name: &str) -> PathBuf {
    let dest = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-fixture")
        .join(name);
    fixture::copy("cli_fixture", &dest)
}

/// The copy that tests only read, made once per test process.
fn shared_fixture() -> &'static Path {
    static SHARED: OnceLock<PathBuf> = OnceLock::new();
    SHARED.get_or_init(|| fixture_copy("shared"))
}

/// Runs the CLI in `dir` with `args`.
fn cli(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-interleave"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env_remove(interleave_test::env::REPLAY)
        .env_remove(interleave_test::env::REGRESSIONS)
        .output()
        .expect("the CLI runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// Asserts the exit code, showing both streams when it differs.
fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
}

#[test]
fn replaying_the_corpus_reports_every_file_and_fails() {
    let out = cli(shared_fixture(), &["replay", "interleave-regressions"]);
    assert_exit(&out, 1);
    let expected = [
        format!("FAILS   {DEADLOCK}  deadlock: every live thread is blocked"),
        format!("fixed   {FIXED}  ({FIXED_DETAIL})"),
        format!("FAILS   {RACY}  panic: assertion `left == right` failed: an update was lost"),
        "3 schedules: 2 still fail, 1 fixed, 0 diverged, 0 invalid".to_owned(),
    ];
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), expected);
}

#[test]
fn only_the_fixed_schedule_passes() {
    let out = cli(
        shared_fixture(),
        &["replay", "--test", "fixed", "interleave-regressions"],
    );
    assert_exit(&out, 0);
    let expected = format!(
        "fixed   {FIXED}  ({FIXED_DETAIL})\n1 schedule: 0 still fail, 1 fixed, 0 diverged, 0 \
         invalid\n"
    );
    assert_eq!(stdout(&out), expected);
}

#[test]
fn cargo_style_invocation_with_a_file_filter_and_a_manifest_path() {
    // As cargo runs it (`cargo interleave ...` passes `interleave` first), from the parent
    // directory, so the package comes from --manifest-path.
    let fixture = shared_fixture();
    let parent = fixture.parent().unwrap();
    let args = [
        "interleave",
        "replay",
        "--manifest-path=shared/Cargo.toml",
        "--file",
        "opposite",
        "shared/interleave-regressions",
    ];
    let out = cli(parent, &args);
    assert_exit(&out, 1);
    let expected = format!(
        "FAILS   shared/{DEADLOCK}  deadlock: every live thread is blocked\n\
         1 schedule: 1 still fail, 0 fixed, 0 diverged, 0 invalid\n"
    );
    assert_eq!(stdout(&out), expected);
}

/// Outside any crate, with no `--manifest-path`, the CLI says so and what to pass, and
/// builds nothing; with `--manifest-path`, the same file replays from there.
#[test]
fn outside_a_crate_it_says_so_and_points_to_manifest_path() {
    let outside = std::env::temp_dir().join(format!("interleave-outside-{}", std::process::id()));
    std::fs::create_dir_all(&outside).unwrap();
    assert!(
        !outside.ancestors().any(|d| d.join("Cargo.toml").is_file()),
        "the temporary directory is inside a crate: {}",
        outside.display()
    );
    let fixture = shared_fixture();
    let file = fixture.join(DEADLOCK).display().to_string();
    let out = cli(&outside, &["replay", &file]);
    assert_exit(&out, 1);
    let expected = format!(
        "{} is not inside a crate (no Cargo.toml there or above): run cargo interleave in the \
         crate whose tests recorded the schedules, or name it with --manifest-path \
         <crate>/Cargo.toml",
        outside.display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let manifest = fixture.join("Cargo.toml").display().to_string();
    let out = cli(&outside, &["replay", "--manifest-path", &manifest, &file]);
    assert_exit(&out, 1);
    assert!(
        stdout(&out).starts_with(&format!("FAILS   {file}  deadlock")),
        "{}",
        stdout(&out)
    );
    std::fs::remove_dir_all(outside).unwrap();
}

/// `--release`, `--features`, `-p` and the other build options reach `cargo test --no-run`
/// in the order given, each value joined to its option (so none can pass for an option),
/// and a failed build names the command with them. `CARGO` points to a script that records
/// its arguments and fails.
#[cfg(unix)]
#[test]
fn build_options_reach_cargo_as_given() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("interleave-fake-cargo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("cargo");
    let record = dir.join("args");
    let body = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 3\n",
        record.display()
    );
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = shared_fixture().join(DEADLOCK).display().to_string();
    let args = [
        "replay",
        "--release",
        "--features",
        "x y",
        "-p",
        "-v",
        "--no-default-features",
        &file,
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-interleave"))
        .args(args)
        .current_dir(shared_fixture())
        .env("CARGO", &script)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let recorded = std::fs::read_to_string(&record).unwrap();
    let expected = [
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
        "--release",
        "--features=x y",
        "--package=-v",
        "--no-default-features",
    ];
    assert_eq!(recorded.lines().collect::<Vec<_>>(), expected);
    let shown = format!(
        "`{} test --no-run --release --features=x y --package=-v --no-default-features` failed",
        script.display()
    );
    assert!(stderr(&out).contains(&shown), "{}", stderr(&out));
    std::fs::remove_dir_all(dir).unwrap();
}

/// A cut-off file, a schedule of a test that no longer exists and one that no longer fits
/// its test: one line each, and the run fails.
#[test]
fn broken_files_are_named_with_what_is_wrong() {
    let dir = fixture_copy("broken");
    let racy = dir.join(RACY);
    let text = std::fs::read_to_string(&racy).unwrap();
    std::fs::write(&racy, &text[..text.len() / 2]).unwrap();
    let fixed = std::fs::read_to_string(dir.join(FIXED)).unwrap();
    let gone = "interleave-regressions/cli_fixture_tests/gone/0000000000000001.json";
    std::fs::create_dir_all(dir.join(gone).parent().unwrap()).unwrap();
    let renamed = fixed.replace(
        "\"cli_fixture_tests::fixed\"",
        "\"cli_fixture_tests::gone\"",
    );
    std::fs::write(dir.join(gone), renamed).unwrap();
    // Thread #7 never exists in `fixed`: the schedule stops fitting at its first decision.
    let diverging = FIXED.replace("28c6a01fb8885446", "0000000000000002");
    let edited = fixed.replace(
        "{ \"thread\": 0, \"step\": 2",
        "{ \"thread\": 7, \"step\": 2",
    );
    assert_ne!(edited, fixed);
    std::fs::write(dir.join(&diverging), edited).unwrap();
    // A plain #[test] runs, but judges nothing: no verdict is no success.
    let plain = "interleave-regressions/cli_fixture_tests/plain_test/0000000000000005.json";
    std::fs::create_dir_all(dir.join(plain).parent().unwrap()).unwrap();
    let named_plain = fixed.replace(
        "\"cli_fixture_tests::fixed\"",
        "\"cli_fixture_tests::plain_test\"",
    );
    std::fs::write(dir.join(plain), named_plain).unwrap();
    // A file of an older development format is refused with what to do.
    let old = "interleave-regressions/cli_fixture_tests/old/0000000000000006.json";
    std::fs::create_dir_all(dir.join(old).parent().unwrap()).unwrap();
    std::fs::write(
        dir.join(old),
        fixed.replace("\"version\": 7,", "\"version\": 6,"),
    )
    .unwrap();

    let out = cli(
        &dir,
        &["replay", "interleave-regressions/cli_fixture_tests"],
    );
    assert_exit(&out, 1);
    let stdout = stdout(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{stdout}");
    let diverged = format!(
        "diverged {diverging}: it stops fitting at decision 0 of 5: the schedule chose thread \
         'main' (#7) there (`thread spawn`), and there is no such thread now"
    );
    assert_eq!(lines[0], diverged, "{stdout}");
    assert_eq!(lines[1], format!("fixed   {FIXED}  ({FIXED_DETAIL})"));
    assert_eq!(
        lines[2],
        format!(
            "missing {gone}: no test named cli_fixture_tests::gone in this package \
             {FEATURE_HINT}"
        )
    );
    let no_verdict = format!(
        "invalid {plain}: test `plain_test` ran but printed no verdict for the schedule (exit \
         status: 0); is it an #[interleave] test or a test calling model()"
    );
    assert!(
        lines[3].starts_with(&format!(
            "invalid {old}: old schedule format 6: this interleave-test reads only format 7"
        )) && lines[3].contains("run the test again"),
        "{stdout}"
    );
    assert!(lines[4].starts_with(&no_verdict), "{stdout}");
    assert!(
        lines[5].starts_with(&format!("invalid {RACY}: invalid schedule: ")),
        "{stdout}"
    );
    assert!(lines[5].contains("cut off"), "{stdout}");
    assert_eq!(
        lines[6],
        "6 schedules: 0 still fail, 1 fixed, 1 diverged, 3 invalid, 1 missing"
    );
}

#[test]
fn help_documents_usage_and_exits_0() {
    for flag in ["--help", "-h"] {
        let out = cli(repo(), &["interleave", "replay", flag]);
        assert_exit(&out, 0);
        let help = stdout(&out);
        for needle in [
            "Usage: cargo interleave replay [OPTIONS] <FILE|DIR>...",
            "--test <TEXT>",
            "Examples:",
            "Exit status:",
        ] {
            assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
        }
    }
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["replay", "--bogus", "x"],
            "error: unknown option `--bogus`",
        ),
        (&["replay"], "error: no schedule file or directory given"),
        (
            &["replay", "no/such/dir"],
            "error: cannot read `no/such/dir`: ",
        ),
        (&["frobnicate"], "error: unknown command `frobnicate`"),
    ];
    for (args, message) in cases {
        let out = cli(repo(), args);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.starts_with(message), "{args:?}: {err}");
        assert!(
            err.contains("Usage: cargo interleave replay"),
            "{args:?}: {err}"
        );
        assert_eq!(stdout(&out), "", "{args:?}");
    }
}

/// Runs the CLI like [`cli`], failing the test if it takes more than 60 s: hostile files
/// must be refused at once, never block the tool or make it read for ever.
fn cli_at_once(dir: &Path, args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_cargo-interleave"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env_remove(interleave_test::env::REPLAY)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the CLI runs");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out.expect("the CLI's output is read"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("cargo interleave {args:?} did not end within 60 s");
        }
    }
}

/// Regression (issue 7): a schedule whose test is `<crate>::--logfile=<file>` made libtest
/// create that file and run every test of the binary, plain `#[test]`s included, and the CLI
/// printed `diverged` with exit status 0. Now the file is invalid and nothing runs; a name
/// that is only the beginning of a test's name runs nothing either (`--exact`).
#[test]
fn an_injected_test_name_is_invalid_and_runs_no_test() {
    let dir = fixture_copy("injection");
    let logfile = dir.join("x.txt");
    let racy = std::fs::read_to_string(dir.join(RACY)).unwrap();
    let named = |test: &str| racy.replace("\"cli_fixture_tests::racy\"", &format!("{test:?}"));
    let injected = "interleave-regressions/cli_fixture_tests/racy/0000000000000003.json";
    let injection = format!("cli_fixture_tests::--logfile={}", logfile.display());
    std::fs::write(dir.join(injected), named(&injection)).unwrap();
    let prefix = "interleave-regressions/cli_fixture_tests/racy/0000000000000004.json";
    std::fs::write(dir.join(prefix), named("cli_fixture_tests::rac")).unwrap();

    let out = cli(
        &dir,
        &[
            "replay",
            "--file",
            "/000000000000000",
            "interleave-regressions",
        ],
    );
    assert_exit(&out, 1);
    let stdout = stdout(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    let refused =
        format!("invalid {injected}: invalid schedule: field `test` should be a Rust test path");
    assert!(lines[0].starts_with(&refused), "{stdout}");
    assert!(
        lines[0].contains("found \"cli_fixture_tests::--logfile="),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        format!(
            "missing {prefix}: no test named cli_fixture_tests::rac in this package \
             {FEATURE_HINT}"
        )
    );
    assert_eq!(
        lines[2],
        "2 schedules: 0 still fail, 0 fixed, 0 diverged, 1 invalid, 1 missing"
    );
    assert!(!logfile.exists(), "libtest wrote {}", logfile.display());
    assert!(!dir.join("plain-test-ran").exists(), "a plain test ran");
}

/// Regression (issue 7): a FIFO named `*.json` hung `cargo interleave replay`, `/dev/zero`
/// was read until memory ran out, and a 10 MB wrong-typed field printed a 10 MB line. Each
/// is now an `invalid` line at once (no build is needed: no file names a test).
#[cfg(unix)]
#[test]
fn hostile_files_are_invalid_at_once_with_short_lines() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-hostile");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let corpus = dir.join("odd");
    std::fs::create_dir_all(&corpus).unwrap();
    let made = Command::new("mkfifo")
        .arg(corpus.join("fifo.json"))
        .status();
    assert!(made.expect("mkfifo runs").success());
    let big = std::fs::File::create(corpus.join("big.json")).unwrap();
    big.set_len(interleave_test::Schedule::MAX_FILE_BYTES + 1)
        .unwrap();
    std::fs::write(dir.join("secret.json"), "{\"format\": \"a secret\"}").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.json"), corpus.join("out.json")).unwrap();
    let fixed = std::fs::read_to_string(repo().join("tests/fixtures/cli_fixture").join(FIXED));
    let long = format!("\"seed\": \"{}\"", "7".repeat(10 << 20));
    let long = fixed.unwrap().replacen("\"seed\": null", &long, 1);
    assert!(long.len() > 10 << 20);
    std::fs::write(corpus.join("long.json"), long).unwrap();

    let out = cli_at_once(&dir, &["replay", "odd", "/dev/zero"]);
    assert_exit(&out, 1);
    let stdout = stdout(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    let limit = interleave_test::Schedule::MAX_FILE_BYTES;
    let expected = [
        format!("invalid odd/big.json: the file holds at least {} bytes, more than the {limit}", limit + 1),
        "invalid odd/fifo.json: not a regular file but a FIFO (named pipe); it was not read".to_owned(),
        "invalid odd/long.json: invalid schedule: field `seed` should be a non-negative integer, found \"7777".to_owned(),
        "invalid odd/out.json: a symbolic link to ".to_owned(),
        "invalid /dev/zero: not a regular file but a character device; it was not read".to_owned(),
    ];
    assert_eq!(lines.len(), expected.len() + 1, "{stdout}");
    for (line, start) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(start.as_str()),
            "{line:?} should start with {start:?}"
        );
        assert!(
            line.len() < 200 || line.contains(" outside "),
            "{} bytes: {line}",
            line.len()
        );
    }
    assert!(lines[2].ends_with("… (10485760 bytes)"), "{}", lines[2]);
    assert!(!stdout.contains("a secret"), "{stdout}");
    assert_eq!(
        lines[5],
        "5 schedules: 0 still fail, 0 fixed, 0 diverged, 5 invalid"
    );
}
