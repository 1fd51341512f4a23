//! Helpers shared by the bench targets that compare with loom and shuttle: the quick mode,
//! timing, silencing their panic output, printing markdown tables with their counts and
//! the machine's load, and the randomized strategies both tools have ([`randomized`]).

pub(crate) mod randomized;

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Whether `INTERLEAVE_BENCH_QUICK` asks for a smoke run (set, not empty, not `0`).
pub(crate) fn quick_mode() -> bool {
    std::env::var("INTERLEAVE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Runs `f` and measures its wall time.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

/// Runs `f` with a no-op panic hook and catches its panic; restores the previous hook. loom
/// and shuttle always run inside it. shuttle installs its own hook (once per process) at its
/// first execution, and that hook must not stay installed: it would print for every panic,
/// including those of our model threads, which our hook records silently.
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    result
}

/// A count with thousands separators, for tables.
pub(crate) fn count_cell(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The 1-minute load average of `/proc/loadavg`, or `unknown` where there is none.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A count as `u64`.
pub(crate) fn as_u64(n: usize) -> u64 {
    u64::try_from(n).expect("a count fits in u64")
}

/// Prints a markdown table under a `###` title; columns from `right_from` on are aligned
/// right.
pub(crate) fn print_table(
    title: &str,
    header: &[impl AsRef<str>],
    right_from: usize,
    rows: &[String],
) {
    let header: Vec<&str> = header.iter().map(AsRef::as_ref).collect();
    println!();
    println!("### {title}");
    println!();
    println!("| {} |", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i < right_from { "---" } else { "---:" })
        .collect();
    println!("|{}|", align.join("|"));
    for row in rows {
        println!("{row}");
    }
}
