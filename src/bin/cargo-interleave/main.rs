//! `cargo interleave`: replays the schedules `#[interleave]` tests stored in their regression
//! corpus, and says for each whether the failure it recorded is still there.
//!
//! Run `cargo interleave --help` for usage, output format and exit codes.

mod args;
mod cargo;
mod collect;
mod outcome;
mod replay;

use std::process::ExitCode;

use args::Command;

/// Why the tool stopped early.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The command line is wrong (exit status 2).
    Usage(String),
    /// Something the tool needs failed, e.g. the build (exit status 1).
    Failed(String),
}

impl CliError {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }
}

fn main() -> ExitCode {
    let result = args::parse(std::env::args_os().collect()).and_then(|command| match command {
        Command::Help => {
            print!("{}", args::HELP);
            Ok(true)
        }
        Command::Replay(args) => replay::run(&args),
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(CliError::Failed(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Err(CliError::Usage(message)) => {
            eprintln!("error: {message}");
            eprintln!("\nUsage: cargo interleave replay [OPTIONS] <FILE|DIR>...");
            eprintln!("Run `cargo interleave --help` for more.");
            ExitCode::from(2)
        }
    }
}
