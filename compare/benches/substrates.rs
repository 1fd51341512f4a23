//! interleave-test's two substrates (coroutines, OS threads) against shuttle 0.9.10 and loom
//! 0.7.3, on the same models, in one process, first without added load and then with one
//! busy-looping thread per core. For each condition it prints:
//!
//! 1. **Executions per second** of the six models of `benches/models/mod.rs` under the
//!    random strategy and PCT (depth 3), seed 1: ours on each substrate with parallelism 1
//!    and parallelism = cores, and shuttle (`Runner` with `RandomScheduler::new_from_seed` or
//!    `PctScheduler::new_from_seed`; shuttle runs one execution at a time, so it is measured
//!    once). Each of our cells carries its ratio to shuttle.
//! 2. **Start-up**: microseconds per `check` call of one execution of an empty model, a fresh
//!    `Builder` per call (`Builder::new().iterations(1).check(empty)`, shuttle's `Runner` with
//!    a one-iteration scheduler, loom's `Builder::check`). One execution runs on one driver
//!    whatever the parallelism, so only parallelism 1 is measured. `Builder::new()` alone is
//!    measured too, as it is a large part of our figure.
//! 3. **loom's bounded DFS** (loom has no random search): executions per second of
//!    `loom::model::Builder` with `preemption_bound` 2, counted by a `std` atomic in the model
//!    and capped through `max_permutations`, beside our DFS with the same bound on coroutines.
//!    These are DFS figures, not comparable one for one with the random columns: a DFS
//!    execution replays a prefix, and both tools' searches may end (exhaust) before the cap
//!    (a search that takes less than a second is then timed whole, repeated back to back).
//!    loom's search is also reduced (DPOR), so where both exhaust, it runs fewer executions
//!    for the same bound: compare the time per run there, not the executions per second.
//!
//! Then the slowdown under load of each configuration (rate without ÷ rate with the busy
//! threads). Every measurement is calibrated: 100 executions (or calls), times 4 until a run
//! takes at least 1 s, and the median of that run and two more of its length. The per-run
//! rates go to stderr as it goes; a figure whose runs differed by more than 1.5× is marked
//! `*`.
//!
//! Run it with `cargo bench --bench substrates` (about 20 minutes on 2 cores). For a smoke run
//! set `INTERLEAVE_BENCH_QUICK=1`: one run of 20 executions (or calls) per measurement
//! (seconds). The core count and `/proc/loadavg` are printed: other processes on the machine
//! change every figure, those without added load included.

#[path = "substrates/calibrate.rs"]
mod calibrate;
#[path = "substrates/load.rs"]
mod load;
#[macro_use]
mod models;
#[path = "support/mod.rs"]
#[allow(dead_code, reason = "this bench prints tables only")]
mod support;
#[path = "substrates/tools.rs"]
mod tools;
use support::print_table;

use std::time::Duration;

use interleave_test::Substrate;

use calibrate::{Sample, measure};
use load::Load;
use tools::{Ours, Search};

models!(in_loom, loom);

/// One model, as written for each tool.
struct Model {
    name: &'static str,
    ours: fn(),
    shuttle: fn(),
    loom: fn(),
}

const MODELS: [Model; 6] = [
    Model {
        name: "fetch_add_2x200",
        ours: models::ours::fetch_add_2x200,
        shuttle: models::theirs::fetch_add_2x200,
        loom: in_loom::fetch_add_2x200,
    },
    Model {
        name: "racy_counter",
        ours: models::ours::racy_counter,
        shuttle: models::theirs::racy_counter,
        loom: in_loom::racy_counter,
    },
    Model {
        name: "mutex_3x2",
        ours: models::ours::mutex_3x2,
        shuttle: models::theirs::mutex_3x2,
        loom: in_loom::mutex_3x2,
    },
    Model {
        name: "mpsc_2x3",
        ours: models::ours::mpsc_2x3,
        shuttle: models::theirs::mpsc_2x3,
        loom: in_loom::mpsc_2x3,
    },
    Model {
        name: "atomics_long",
        ours: models::ours::atomics_long,
        shuttle: models::theirs::atomics_long,
        loom: in_loom::atomics_long,
    },
    Model {
        name: "pipeline_2stage",
        ours: models::ours::pipeline_2stage,
        shuttle: models::theirs::pipeline_2stage,
        loom: in_loom::pipeline_2stage,
    },
];

/// Our configurations of measurement 1: each substrate with parallelism 1 and `cores`.
fn configs(cores: usize) -> Vec<Ours> {
    let mut parallelisms = vec![1, cores];
    parallelisms.dedup();
    [Substrate::Coroutines, Substrate::Threads]
        .into_iter()
        .flat_map(|substrate| {
            parallelisms.iter().map(move |&parallelism| Ours {
                substrate,
                parallelism,
            })
        })
        .collect()
}

/// Our configurations of the start-up measurement: each substrate, parallelism 1.
const START_UP: [Ours; 2] = [
    Ours {
        substrate: Substrate::Coroutines,
        parallelism: 1,
    },
    Ours {
        substrate: Substrate::Threads,
        parallelism: 1,
    },
];

/// Measurement 1, one row: a model under one search.
struct RateRow {
    model: &'static str,
    search: Search,
    /// One sample per configuration of [`configs`], in its order.
    ours: Vec<Sample>,
    shuttle: Sample,
}

/// Measurement 2, one row: one search.
struct StartUpRow {
    search: Search,
    /// One sample per configuration of [`START_UP`].
    ours: Vec<Sample>,
    shuttle: Sample,
}

/// Measurement 3, one row: a model.
struct DfsRow {
    model: &'static str,
    loom: Sample,
    ours: Sample,
}

/// Everything measured under one condition (with or without added load).
struct Results {
    rates: Vec<RateRow>,
    start_up: Vec<StartUpRow>,
    /// `Builder::new()` alone.
    builder_new: Sample,
    loom_start_up: Sample,
    dfs: Vec<DfsRow>,
}

fn measure_rates(quick: bool, configs: &[Ours]) -> Vec<RateRow> {
    let mut rows = Vec::new();
    for m in &MODELS {
        for search in Search::ALL {
            let ours = configs
                .iter()
                .map(|&c| {
                    let label = format!("{} {} {}", m.name, search.name(), c.label());
                    measure(&label, quick, &|n| c.run(search, m.ours, n))
                })
                .collect();
            let label = format!("{} {} shuttle", m.name, search.name());
            let shuttle = measure(&label, quick, &|n| tools::shuttle_run(search, m.shuttle, n));
            rows.push(RateRow {
                model: m.name,
                search,
                ours,
                shuttle,
            });
        }
    }
    rows
}

/// Measurement 2: the rows, then `Builder::new()` alone, then loom.
fn measure_start_up(quick: bool) -> (Vec<StartUpRow>, Sample, Sample) {
    let rows = Search::ALL
        .into_iter()
        .map(|search| {
            let ours = START_UP
                .iter()
                .map(|&c| {
                    let label = format!("start-up {} {}", search.name(), c.label());
                    measure(&label, quick, &|n| c.start_up(search, n))
                })
                .collect();
            let label = format!("start-up {} shuttle", search.name());
            let shuttle = measure(&label, quick, &|n| tools::shuttle_start_up(search, n));
            StartUpRow {
                search,
                ours,
                shuttle,
            }
        })
        .collect();
    let builder = measure("Builder::new()", quick, &tools::ours_builder_new);
    let loom = measure("start-up loom DFS", quick, &tools::loom_start_up);
    (rows, builder, loom)
}

fn measure_dfs(quick: bool) -> Vec<DfsRow> {
    MODELS
        .iter()
        .map(|m| DfsRow {
            model: m.name,
            loom: measure(&format!("{} loom DFS", m.name), quick, &|n| {
                tools::loom_dfs(m.loom, n)
            }),
            ours: measure(&format!("{} coroutines DFS", m.name), quick, &|n| {
                tools::ours_dfs(m.ours, n)
            }),
        })
        .collect()
}

fn measure_all(quick: bool, configs: &[Ours]) -> Results {
    eprintln!("1. executions per second ...");
    let rates = measure_rates(quick, configs);
    eprintln!("2. start-up ...");
    let (start_up, builder_new, loom_start_up) = measure_start_up(quick);
    eprintln!("3. loom's bounded DFS ...");
    let dfs = measure_dfs(quick);
    Results {
        rates,
        start_up,
        builder_new,
        loom_start_up,
        dfs,
    }
}

// ---------------------------------------------------------------------------------------------
// Printing.

/// The column headers of our configurations.
fn labels(configs: &[Ours]) -> Vec<String> {
    configs.iter().map(|c| c.label()).collect()
}

/// "125000 (0.84)": our rate and its ratio to shuttle's.
fn rate_cell(ours: Sample, shuttle: Sample) -> String {
    let ratio = ours.per_second() / shuttle.per_second();
    format!("{:.0}{} ({ratio:.2})", ours.per_second(), ours.mark())
}

/// "12.3 (4.10)": our microseconds per call and their ratio to shuttle's.
fn micros_cell(ours: Sample, shuttle: Sample) -> String {
    let ratio = ours.micros_each() / shuttle.micros_each();
    format!("{:.1}{} ({ratio:.2})", ours.micros_each(), ours.mark())
}

/// The footnote of the `*` mark, if one of `samples` carries it.
fn print_noise_note<'a>(samples: impl IntoIterator<Item = &'a Sample>) {
    if samples.into_iter().all(|s| s.mark().is_empty()) {
        return;
    }
    println!();
    println!(
        "`*`: the runs of this figure differed by more than {}× (fastest ÷ slowest; stderr \
         lists them): other processes most likely took the cores during some of them.",
        calibrate::NOISY
    );
}

/// "2000" or "1730 (exhausted in 5.1ms)": the executions of one run of a DFS measurement,
/// and the time the whole search took where it ended before the cap.
fn count_cell(s: Sample) -> String {
    let count = s.count / s.repeats;
    match s.exhausted {
        true => format!(
            "{count} (exhausted in {:.1?})",
            s.elapsed.div_f64(s.repeats as f64)
        ),
        false => count.to_string(),
    }
}

fn print_results(condition: &str, results: &Results, configs: &[Ours]) {
    let mut header: Vec<String> = ["model", "search"].map(String::from).to_vec();
    header.extend(labels(configs));
    header.push("shuttle".into());
    let rows: Vec<String> = results
        .rates
        .iter()
        .map(|r| {
            let mut cells = vec![r.model.to_owned(), r.search.name().to_owned()];
            cells.extend(r.ours.iter().map(|&s| rate_cell(s, r.shuttle)));
            cells.push(format!("{:.0}{}", r.shuttle.per_second(), r.shuttle.mark()));
            format!("| {} |", cells.join(" | "))
        })
        .collect();
    let title = format!(
        "1. Executions per second, {condition} (in parentheses: ours/shuttle; ×N = parallelism)"
    );
    print_table(&title, &header, 2, &rows);
    print_noise_note(
        results
            .rates
            .iter()
            .flat_map(|r| r.ours.iter().chain([&r.shuttle])),
    );

    let mut header = vec!["search".to_owned()];
    header.extend(labels(&START_UP));
    header.push("shuttle".into());
    let rows: Vec<String> = results
        .start_up
        .iter()
        .map(|r| {
            let mut cells = vec![r.search.name().to_owned()];
            cells.extend(r.ours.iter().map(|&s| micros_cell(s, r.shuttle)));
            cells.push(format!(
                "{:.1}{}",
                r.shuttle.micros_each(),
                r.shuttle.mark()
            ));
            format!("| {} |", cells.join(" | "))
        })
        .collect();
    let title = format!(
        "2. Start-up, {condition}: µs per one-execution `check` of an empty model \
         (in parentheses: ours µs / shuttle µs)"
    );
    print_table(&title, &header, 1, &rows);
    let start_up = results.start_up.iter();
    print_noise_note(start_up.flat_map(|r| r.ours.iter().chain([&r.shuttle])));
    println!();
    println!(
        "Of our figures, `Builder::new()` alone: {:.1}{} µs per call.",
        results.builder_new.micros_each(),
        results.builder_new.mark()
    );
    println!(
        "loom (`Builder` with preemption_bound {}, DFS; one execution): {:.1}{} µs per call.",
        tools::DFS_BOUND,
        results.loom_start_up.micros_each(),
        results.loom_start_up.mark()
    );

    print_dfs(condition, results);
}

fn print_dfs(condition: &str, results: &Results) {
    let header = [
        "model",
        "loom DFS exec/s",
        "loom executions/run",
        "loom / shuttle random",
        "ours DFS exec/s (coroutines ×1)",
        "ours executions/run",
        "ours DFS / loom DFS",
    ]
    .map(String::from);
    let rows: Vec<String> = results
        .dfs
        .iter()
        .map(|r| {
            let shuttle = results
                .rates
                .iter()
                .find(|s| s.model == r.model && s.search == Search::Random)
                .expect("every model has a random row")
                .shuttle;
            let (loom, ours) = (r.loom.per_second(), r.ours.per_second());
            format!(
                "| {} | {loom:.0}{} | {} | {:.2} | {ours:.0}{} | {} | {:.2} |",
                r.model,
                r.loom.mark(),
                count_cell(r.loom),
                loom / shuttle.per_second(),
                r.ours.mark(),
                count_cell(r.ours),
                ours / loom
            )
        })
        .collect();
    let title = format!(
        "3. loom: bounded DFS (preemption bound {}), {condition}. DFS, not random: an \
         exhausted search was timed whole, repeated to fill a second; loom's is reduced \
         (DPOR), so compare exhausted searches by their time",
        tools::DFS_BOUND
    );
    print_table(&title, &header, 1, &rows);
    print_noise_note(results.dfs.iter().flat_map(|r| [&r.loom, &r.ours]));
}

/// The geometric mean of base ÷ loaded rates over pairs of samples.
fn slowdown(pairs: impl Iterator<Item = (Sample, Sample)>) -> f64 {
    let (sum, n) = pairs.fold((0.0, 0), |(sum, n), (base, loaded)| {
        (sum + (base.per_second() / loaded.per_second()).ln(), n + 1)
    });
    (sum / f64::from(n)).exp()
}

/// A table row of slowdowns, "—" where nothing was measured.
fn slowdown_row(what: &str, cells: impl Iterator<Item = Option<f64>>) -> String {
    let cells: Vec<String> = cells
        .map(|d| d.map_or("—".to_owned(), |d| format!("{d:.2}")))
        .collect();
    format!("| {what} | {} |", cells.join(" | "))
}

fn print_slowdown(base: &Results, loaded: &Results, configs: &[Ours]) {
    let rates = || base.rates.iter().zip(&loaded.rates);
    let ours =
        (0..configs.len()).map(|i| Some(slowdown(rates().map(|r| (r.0.ours[i], r.1.ours[i])))));
    let shuttle = slowdown(rates().map(|r| (r.0.shuttle, r.1.shuttle)));
    let mut rows = vec![slowdown_row(
        &format!("executions/s (geo-mean of {} rows)", base.rates.len()),
        ours.chain([Some(shuttle)]),
    )];
    // Start-up measures parallelism 1 only: the other columns stay empty.
    let starts = || base.start_up.iter().zip(&loaded.start_up);
    let ours = configs.iter().map(|c| {
        let j = START_UP.iter().position(|s| s == c)?;
        Some(slowdown(starts().map(|r| (r.0.ours[j], r.1.ours[j]))))
    });
    let shuttle = slowdown(starts().map(|r| (r.0.shuttle, r.1.shuttle)));
    rows.push(slowdown_row(
        "start-up (geo-mean of 2 rows)",
        ours.chain([Some(shuttle)]),
    ));
    let mut header = vec!["measurement".to_owned()];
    header.extend(labels(configs));
    header.push("shuttle".into());
    print_table(
        "Slowdown under the added load: rate without ÷ rate with the busy threads \
         (1.00 = unaffected, 2.00 = half speed)",
        &header,
        1,
        &rows,
    );
    let dfs = |f: fn(&DfsRow) -> Sample| {
        slowdown(base.dfs.iter().zip(&loaded.dfs).map(|(a, b)| (f(a), f(b))))
    };
    println!();
    println!(
        "DFS (geo-mean of {} models): loom {:.2}, ours on coroutines {:.2}; loom start-up {:.2}",
        base.dfs.len(),
        dfs(|r| r.loom),
        dfs(|r| r.ours),
        slowdown(std::iter::once((base.loom_start_up, loaded.loom_start_up)))
    );
}

/// The three load averages of `/proc/loadavg`.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").ok();
    let fields: Vec<&str> = text.iter().flat_map(|t| t.split_whitespace()).collect();
    match fields.get(..3) {
        Some(avg) => avg.join(" "),
        None => "unknown".to_owned(),
    }
}

/// Rounds per second of one busy thread while the bench waits: the reference for how much of
/// a core each load thread got.
fn one_core_spin_rate() -> f64 {
    let one = Load::start(1);
    std::thread::sleep(Duration::from_millis(300));
    one.stop()
}

fn main() {
    let quick = support::quick_mode();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let configs = configs(cores);
    tools::disarm_shuttle_hook();
    eprintln!(
        "measuring ({}) ...",
        if quick {
            "quick: 20 executions or calls, 1 run"
        } else {
            "calibrated >= 1 s, median of 3"
        }
    );
    println!("## interleave-test substrates vs shuttle 0.9.10 and loom 0.7.3");
    println!();
    println!(
        "cores: {cores}; load average (1, 5, 15 min) at the start: {}; quick mode: {quick}",
        load_average()
    );
    if quick {
        println!();
        println!(
            "Quick mode: every figure comes from one run of {} executions or calls, which \
             thread start-up and other processes dominate. It shows that everything runs and \
             passes; it measures nothing.",
            calibrate::QUICK_COUNT
        );
    }

    eprintln!("without added load");
    let base = measure_all(quick, &configs);
    print_results("no added load", &base, &configs);
    println!();
    println!("load average after this half: {}", load_average());

    let alone = one_core_spin_rate();
    eprintln!("with {cores} busy threads");
    let load = Load::start(cores);
    let loaded = measure_all(quick, &configs);
    let per_thread = load.stop();
    println!();
    println!(
        "## With {cores} busy-looping threads (each got {:.2} of the rate of one busy thread \
         alone)",
        per_thread / alone
    );
    let condition = format!("{cores} busy threads");
    print_results(&condition, &loaded, &configs);

    println!();
    println!("## Without against with the added load");
    print_slowdown(&base, &loaded, &configs);
    println!();
    println!(
        "cores: {cores}; load average (1, 5, 15 min) at the end: {}; quick mode: {quick}",
        load_average()
    );
}
