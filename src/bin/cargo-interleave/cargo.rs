//! Building the package's test binaries with cargo and finding them by crate name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use interleave_test::protocol::json::{self, Value};

use interleave_test::Build;

use crate::CliError;

/// A test binary cargo built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TestBinary {
    /// The executable.
    pub(crate) exe: PathBuf,
    /// The root of its package (the directory of its `Cargo.toml`): tests run there.
    pub(crate) root: PathBuf,
}

/// The test binaries of a build, by crate name (a target's name with `-` as `_`).
#[derive(Debug, Default)]
pub(crate) struct TestBinaries {
    by_crate: BTreeMap<String, Vec<TestBinary>>,
}

impl TestBinaries {
    /// The binary of crate `name` for the schedule at `file`: of several (packages of a
    /// workspace may share a test target name), the one whose package holds the file.
    pub(crate) fn find(&self, name: &str, file: &Path) -> Option<&TestBinary> {
        let candidates = self.by_crate.get(name)?;
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
        candidates
            .iter()
            .find(|b| file.starts_with(&b.root))
            .or_else(|| candidates.first())
    }
}

/// What a build for schedules recorded as one [`Build`] adds to the user's options: a
/// flags variable that carries `--cfg interleave`, and `--release`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Switches {
    /// A variable and its value (`RUSTFLAGS`, or `CARGO_ENCODED_RUSTFLAGS` when that is set).
    pub(crate) flags: Option<(&'static str, String)>,
    /// The options, the user's first.
    pub(crate) options: Vec<String>,
}

/// The switches that build the test binaries as the schedules recorded: `--release` if they
/// were optimized (unless given), `--cfg interleave` added to the rustflags of the
/// environment if they had it (unless there). Nothing else is ever read from a file; a
/// build recorded without the cfg or in debug keeps what the user gave.
pub(crate) fn switches(build: Build, options: &[String]) -> Switches {
    let mut options = options.to_vec();
    if build.release() == Some(true) && !options.iter().any(|o| o == "--release") {
        options.push("--release".to_owned());
    }
    let flags = (build.cfg_interleave() == Some(true))
        .then(with_cfg_interleave)
        .flatten();
    Switches { flags, options }
}

/// The rustflags of the environment with `--cfg interleave` added, or `None` if they have it.
/// Cargo reads `CARGO_ENCODED_RUSTFLAGS` (arguments separated by `\x1f`) before `RUSTFLAGS`.
fn with_cfg_interleave() -> Option<(&'static str, String)> {
    let has = |args: &[&str]| {
        args.windows(2)
            .any(|w| w[0] == "--cfg" && w[1] == "interleave")
            || args.contains(&"--cfg=interleave")
    };
    if let Ok(encoded) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        let args: Vec<&str> = encoded.split('\x1f').filter(|a| !a.is_empty()).collect();
        if has(&args) {
            return None;
        }
        let sep = if encoded.is_empty() { "" } else { "\x1f" };
        return Some((
            "CARGO_ENCODED_RUSTFLAGS",
            format!("{encoded}{sep}--cfg\x1finterleave"),
        ));
    }
    let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if has(&flags.split_whitespace().collect::<Vec<_>>()) {
        return None;
    }
    Some((
        "RUSTFLAGS",
        format!("{flags} --cfg interleave").trim_start().to_owned(),
    ))
}

/// Runs `cargo test --no-run` (for `manifest_path` if given, with `switches`: the user's
/// build options of [`ReplayArgs::build`](crate::args::ReplayArgs) and what the schedules
/// recorded) and returns its test binaries. Cargo's progress and compiler diagnostics go to
/// stderr as usual.
pub(crate) fn build_tests(
    manifest_path: Option<&Path>,
    switches: &Switches,
) -> Result<TestBinaries, CliError> {
    if manifest_path.is_none() {
        outside_a_crate()?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    if let Some(path) = manifest_path {
        cmd.arg("--manifest-path").arg(path);
    }
    cmd.args(&switches.options);
    let mut shown = format!(
        "{} test --no-run{}",
        Path::new(&cargo).display(),
        switches
            .options
            .iter()
            .map(|o| format!(" {o}"))
            .collect::<String>()
    );
    if let Some((var, value)) = &switches.flags {
        cmd.env(var, value);
        shown = format!("{var}={:?} {shown}", value.replace('\x1f', " "));
    }
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| CliError::Failed(format!("cannot run `{shown}`: {e}")))?;
    if !output.status.success() {
        return Err(CliError::Failed(format!(
            "`{shown}` failed ({}); fix the build, then replay again",
            output.status
        )));
    }
    Ok(parse_messages(&String::from_utf8_lossy(&output.stdout)))
}

/// An error that says so when neither the working directory nor any above it has a
/// `Cargo.toml`: cargo would only say it could not find one, which reads like a build error.
fn outside_a_crate() -> Result<(), CliError> {
    let here = std::env::current_dir()
        .map_err(|e| CliError::Failed(format!("cannot read the working directory: {e}")))?;
    if here.ancestors().any(|dir| dir.join("Cargo.toml").is_file()) {
        return Ok(());
    }
    Err(CliError::Failed(format!(
        "{} is not inside a crate (no Cargo.toml there or above): run cargo interleave in the \
         crate whose tests recorded the schedules, or name it with --manifest-path \
         <crate>/Cargo.toml",
        here.display()
    )))
}

/// Reads cargo's JSON messages (one per line): every test executable it built.
pub(crate) fn parse_messages(stdout: &str) -> TestBinaries {
    let mut binaries = TestBinaries::default();
    for message in stdout.lines().filter_map(|l| json::parse(l).ok()) {
        if let Some((name, binary)) = test_artifact(&message) {
            binaries.by_crate.entry(name).or_default().push(binary);
        }
    }
    binaries
}

/// The crate name and binary of a `compiler-artifact` message for a test executable.
fn test_artifact(message: &Value) -> Option<(String, TestBinary)> {
    let text = |key: &str| message.get(key).and_then(Value::as_str);
    let test = message.get("profile").and_then(|p| p.get("test"));
    if text("reason") != Some("compiler-artifact") || test.and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let exe = PathBuf::from(text("executable")?);
    let root = Path::new(text("manifest_path")?).parent()?.to_owned();
    let target = message.get("target")?;
    let name = target.get("name")?.as_str()?.replace('-', "_");
    Some((name, TestBinary { exe, root }))
}

/// Splits a schedule's test path into the crate name of its test target and the name
/// libtest knows it by: `my_tests::inner::racy` is test `inner::racy` of crate `my_tests`.
pub(crate) fn split_test_path(test: &str) -> Option<(&str, &str)> {
    test.split_once("::")
        .filter(|(krate, name)| !krate.is_empty() && !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: &str, kind: &str, test: bool, exe: Option<&str>, manifest: &str) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "package_id": "path+file:///p#0.1.0",
            "manifest_path": manifest,
            "target": { "kind": [kind], "crate_types": [kind], "name": name, "test": true },
            "profile": { "test": test },
            "executable": exe,
            "fresh": true,
        })
        .to_string()
    }

    #[test]
    fn test_executables_are_found_by_crate_name() {
        let stdout = [
            artifact("dep", "lib", false, None, "/reg/dep/Cargo.toml"),
            artifact("my_crate", "lib", false, None, "/w/a/Cargo.toml"),
            artifact(
                "my_crate",
                "lib",
                true,
                Some("/t/my_crate-1"),
                "/w/a/Cargo.toml",
            ),
            artifact(
                "race-tests",
                "test",
                true,
                Some("/t/race_tests-2"),
                "/w/a/Cargo.toml",
            ),
            "Compiling something (not JSON)".to_owned(),
            r#"{"reason":"build-finished","success":true}"#.to_owned(),
        ]
        .join("\n");
        let bins = parse_messages(&stdout);
        let here = Path::new("/w/a/interleave-regressions/x.json");
        let lib = bins.find("my_crate", here).unwrap();
        assert_eq!(lib.exe, Path::new("/t/my_crate-1"));
        assert_eq!(lib.root, Path::new("/w/a"));
        let tests = bins.find("race_tests", here).unwrap();
        assert_eq!(
            tests.exe,
            Path::new("/t/race_tests-2"),
            "`-` in a target name is `_`"
        );
        assert_eq!(bins.find("dep", here), None, "only test executables count");
        assert_eq!(bins.find("race-tests", here), None);
    }

    #[test]
    fn of_two_packages_the_one_holding_the_file_wins() {
        let stdout = [
            artifact("it", "test", true, Some("/t/it-a"), "/w/a/Cargo.toml"),
            artifact("it", "test", true, Some("/t/it-b"), "/w/b/Cargo.toml"),
        ]
        .join("\n");
        let bins = parse_messages(&stdout);
        let in_b = Path::new("/w/b/interleave-regressions/it/t/1.json");
        assert_eq!(bins.find("it", in_b).unwrap().exe, Path::new("/t/it-b"));
        let elsewhere = Path::new("/elsewhere/1.json");
        assert_eq!(
            bins.find("it", elsewhere).unwrap().exe,
            Path::new("/t/it-a")
        );
    }

    #[test]
    fn test_paths_split_at_the_first_separator() {
        assert_eq!(
            split_test_path("my_tests::racy"),
            Some(("my_tests", "racy"))
        );
        assert_eq!(
            split_test_path("my_crate::a::b::racy"),
            Some(("my_crate", "a::b::racy"))
        );
        assert_eq!(split_test_path("racy"), None);
        assert_eq!(split_test_path("::racy"), None);
        assert_eq!(split_test_path("my_tests::"), None);
    }
}
