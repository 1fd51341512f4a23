//! The command line: `cargo interleave replay [OPTIONS] <FILE|DIR>...`, parsed by hand.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::CliError;

/// The help text, printed by `-h`/`--help`.
pub(crate) const HELP: &str = "\
cargo-interleave: replay stored interleave-test schedules against the current code

Usage: cargo interleave replay [OPTIONS] <FILE|DIR>...

Each schedule file names the #[interleave] test that recorded it, and how its test binary
was built. The package's test binaries are built once per recorded build (`cargo test
--no-run`, with `--cfg interleave` added to RUSTFLAGS and --release where the file says so;
nothing else is read from a file); then each file is judged alone by its test
(INTERLEAVE_REPLAY=<file> <test binary> <test> --exact), from the package root: executions
that follow the schedule as far as it fits, or part of it, then decide at random, looking
for the failure it recorded (same kind, thread name and message; line numbers do not
count). One line says what they found. A directory is searched recursively for *.json
files.

Schedule files are untrusted input (they come with bug reports). A file is read only if it
is a regular file of at most 32 MiB (a FIFO or a device is refused unread). Its test name
must be a Rust path of identifiers; it is passed to the test binary only as the test filter,
with --exact, so a replay runs no test but the one named. In a searched directory, links to
directories are not followed and links to files only if the file is inside it.

Options:
      --test <TEXT>           replay only schedules whose test path contains TEXT
                              (the path is <crate>::<module>::<fn>, e.g. my_tests::queue::push)
      --file <TEXT>           replay only files whose path contains TEXT
      --manifest-path <PATH>  the Cargo.toml of the package to build (default: the one
                              cargo finds from the current directory)
      --release               build the test binaries optimized, as `cargo test --release`
      --features <FEATURES>   features to build with (repeatable), as cargo's --features
      --all-features          build with every feature
      --no-default-features   build without the default features
  -p, --package <SPEC>        the workspace member whose tests to build (repeatable)
  -v, --verbose               print the test's own output under every result but `fixed`
  -h, --help                  print this help

Output: one line per file, then a summary.
  FAILS   <file>  <kind>: <first line>   the failure is still there (kind: panic, deadlock, ...)
  FAILS   <file>  another failure, found from it: <kind>: <first line>
                                         a new failure, found next to the recorded one
  fixed   <file>  (<how much ran>)       the recorded failure no longer happens
  diverged <file>: <reason>              the test changed so much that the schedule does not
                                         fit up to the failing thread's first decision
  invalid <file>: <reason>               not a usable schedule: unreadable, not a regular file,
                                         too large, malformed, names no test or a test that
                                         is not a Rust path, or a link out of the directory
  missing <file>: no test named <x> in this package (...)
                                         the test binary ran no test of that name (is it
                                         behind a feature? add --features)
  N schedules: F still fail, X fixed, D diverged, I invalid[, M missing]

Examples:
  cargo interleave replay interleave-regressions
  cargo interleave replay --test queue::push interleave-regressions
  cargo interleave replay interleave-regressions/my_tests/racy/0123456789abcdef.json
  cargo interleave replay --manifest-path crates/core/Cargo.toml crates/core/interleave-regressions
  cargo interleave replay --features slow interleave-regressions
  cargo run --bin cargo-interleave -- replay interleave-regressions

Exit status:
  0  no schedule still fails, none is invalid and none names a missing test
  1  a schedule still fails, is invalid or names a missing test; or the build failed
  2  usage error: unknown option or command, missing value, no path, a path that does not exist
";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// Print [`HELP`].
    Help,
    /// Replay schedule files.
    Replay(ReplayArgs),
}

/// The arguments of `replay`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ReplayArgs {
    /// Files and directories, as given.
    pub(crate) paths: Vec<PathBuf>,
    /// `--test`: a substring of the test path.
    pub(crate) test: Option<String>,
    /// `--file`: a substring of the file path.
    pub(crate) file: Option<String>,
    /// `--manifest-path`.
    pub(crate) manifest_path: Option<PathBuf>,
    /// `-v`/`--verbose`.
    pub(crate) verbose: bool,
    /// Options for `cargo test --no-run`, in the order given, each one argument
    /// (`--release`, `--features=F`, `--all-features`, `--no-default-features`,
    /// `--package=P`): a value is joined to its option, so it can never be read as an option.
    pub(crate) build: Vec<String>,
}

/// Parses the whole `argv`, program name included. Cargo runs a subcommand as
/// `cargo-interleave interleave ...`; run directly it is `cargo-interleave ...`.
pub(crate) fn parse(argv: Vec<OsString>) -> Result<Command, CliError> {
    let mut args = argv
        .into_iter()
        .skip(1)
        .map(|a| {
            a.into_string()
                .map_err(|a| CliError::usage(format!("argument {a:?} is not valid UTF-8")))
        })
        .collect::<Result<Vec<String>, _>>()?;
    if args.first().is_some_and(|a| a == "interleave") {
        args.remove(0);
    }
    let before_dashes = args.iter().take_while(|a| *a != "--");
    if before_dashes
        .into_iter()
        .any(|a| a == "-h" || a == "--help")
    {
        return Ok(Command::Help);
    }
    match args.first().map(String::as_str) {
        Some("replay") => parse_replay(&args[1..]).map(Command::Replay),
        Some(other) if other.starts_with('-') => Err(CliError::usage(format!(
            "unexpected option `{other}` before the command; options follow `replay`"
        ))),
        Some(other) => Err(CliError::usage(format!(
            "unknown command `{other}`; the only command is `replay`"
        ))),
        None => Err(CliError::usage(
            "no command given; the only command is `replay`",
        )),
    }
}

/// Parses the arguments after `replay`.
fn parse_replay(args: &[String]) -> Result<ReplayArgs, CliError> {
    let mut out = ReplayArgs::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.paths.extend(rest.by_ref().map(PathBuf::from));
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            out.paths.push(PathBuf::from(arg));
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || option_value(name, inline.clone(), &mut rest);
        match name {
            "--test" => out.test = Some(value()?),
            "--file" => out.file = Some(value()?),
            "--manifest-path" => out.manifest_path = Some(PathBuf::from(value()?)),
            "-v" | "--verbose" if inline.is_none() => out.verbose = true,
            "--release" | "--all-features" | "--no-default-features" if inline.is_none() => {
                out.build.push(name.to_owned());
            }
            "--features" => out.build.push(format!("--features={}", value()?)),
            "-p" | "--package" => out.build.push(format!("--package={}", value()?)),
            _ => return Err(CliError::usage(format!("unknown option `{arg}`"))),
        }
    }
    if out.paths.is_empty() {
        return Err(CliError::usage(
            "no schedule file or directory given (e.g. `interleave-regressions`)",
        ));
    }
    Ok(out)
}

/// The value of option `name`: given inline (`--test=x`) or as the next argument.
fn option_value<'a>(
    name: &str,
    inline: Option<String>,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<String, CliError> {
    let value = match inline {
        Some(v) => v,
        None => rest
            .next()
            .cloned()
            .ok_or_else(|| CliError::usage(format!("option `{name}` needs a value")))?,
    };
    if value.is_empty() {
        return Err(CliError::usage(format!(
            "option `{name}` needs a non-empty value"
        )));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, CliError> {
        parse(args.iter().map(OsString::from).collect())
    }

    fn usage_message(args: &[&str]) -> String {
        match parse_strs(args) {
            Err(CliError::Usage(m)) => m,
            other => panic!("expected a usage error for {args:?}, got {other:?}"),
        }
    }

    #[test]
    fn cargo_and_direct_invocations_parse_the_same() {
        let via_cargo = parse_strs(&["cargo-interleave", "interleave", "replay", "dir"]).unwrap();
        let direct = parse_strs(&["cargo-interleave", "replay", "dir"]).unwrap();
        assert_eq!(via_cargo, direct);
        let expected = ReplayArgs {
            paths: vec![PathBuf::from("dir")],
            ..ReplayArgs::default()
        };
        assert_eq!(direct, Command::Replay(expected));
    }

    #[test]
    fn options_take_separate_or_inline_values_anywhere() {
        let cmd = parse_strs(&[
            "x",
            "replay",
            "a",
            "--test",
            "q::push",
            "--file=abc",
            "-v",
            "b",
            "--manifest-path",
            "m/Cargo.toml",
            "--",
            "--c",
        ])
        .unwrap();
        let expected = ReplayArgs {
            paths: ["a", "b", "--c"].iter().map(PathBuf::from).collect(),
            test: Some("q::push".into()),
            file: Some("abc".into()),
            manifest_path: Some(PathBuf::from("m/Cargo.toml")),
            verbose: true,
            build: Vec::new(),
        };
        assert_eq!(cmd, Command::Replay(expected));
    }

    #[test]
    fn build_options_pass_to_cargo_in_order_with_values_joined() {
        let cmd = parse_strs(&[
            "x",
            "replay",
            "--release",
            "--features",
            "a,b",
            "-p",
            "core",
            "--all-features",
            "--package=--sneaky",
            "--no-default-features",
            "--features=c",
            "dir",
        ])
        .unwrap();
        let Command::Replay(args) = cmd else {
            panic!("a replay")
        };
        assert_eq!(
            args.build,
            [
                "--release",
                "--features=a,b",
                "--package=core",
                "--all-features",
                "--package=--sneaky",
                "--no-default-features",
                "--features=c",
            ]
        );
        assert_eq!(args.paths, [PathBuf::from("dir")]);
        assert!(usage_message(&["x", "replay", "--release=yes", "d"]).contains("--release=yes"));
        assert!(usage_message(&["x", "replay", "d", "--features"]).contains("needs a value"));
    }

    #[test]
    fn help_wins_wherever_it_is() {
        for args in [
            &["x", "--help"][..],
            &["x", "interleave", "-h"],
            &["x", "replay", "dir", "--bogus", "--help"],
            &["x", "bogus", "-h"],
        ] {
            assert_eq!(parse_strs(args).unwrap(), Command::Help, "{args:?}");
        }
        // After `--`, `--help` is a path.
        assert!(matches!(
            parse_strs(&["x", "replay", "--", "--help"]).unwrap(),
            Command::Replay(_)
        ));
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        assert_eq!(
            usage_message(&["x", "replay", "d", "--bogus"]),
            "unknown option `--bogus`"
        );
        assert_eq!(
            usage_message(&["x", "replay", "d", "--test"]),
            "option `--test` needs a value"
        );
        assert_eq!(
            usage_message(&["x", "replay", "d", "--file="]),
            "option `--file` needs a non-empty value"
        );
        assert_eq!(
            usage_message(&["x", "replay", "d", "--verbose=1"]),
            "unknown option `--verbose=1`"
        );
        assert!(usage_message(&["x", "replay"]).starts_with("no schedule file or directory given"));
        assert!(usage_message(&["x", "replay", "--test", "t"]).starts_with("no schedule file"));
        assert!(usage_message(&["x"]).starts_with("no command given"));
        assert!(usage_message(&["x", "interleave"]).starts_with("no command given"));
        assert!(usage_message(&["x", "run", "d"]).starts_with("unknown command `run`"));
        assert!(usage_message(&["x", "--test", "t"]).starts_with("unexpected option `--test`"));
    }

    #[test]
    fn help_documents_every_option_and_exit_code() {
        for needle in [
            "Usage: cargo interleave replay",
            "--test <TEXT>",
            "--file <TEXT>",
            "--manifest-path <PATH>",
            "--verbose",
            "--help",
            "Examples:",
            "Exit status:",
            "  0  ",
            "  1  ",
            "  2  ",
        ] {
            assert!(HELP.contains(needle), "help lacks {needle:?}");
        }
    }
}
