//! Soundness of partial-order reduction on generated programs: for 210 small random programs
//! over atomics, mutexes, rwlocks, channels, condvars and yields, DFS with reduction reaches
//! exactly the outcomes DFS without it reaches, with and without a preemption bound.
//!
//! An outcome is everything a program observes: each thread's loaded values and try-results
//! in order, and the final values. Reduction may only skip schedules that are equivalent to
//! one it runs, so the sets must be equal. Each program is printed with its seed on failure.
//! Programs whose unreduced search exceeds 20,000 executions are skipped (at most 40% of
//! them may be); `DPOR_SOUNDNESS_PROGRAMS=N` checks `N` programs per test, for a soak.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::mpsc::{Receiver, Sender, channel};
use interleave_test::sync::{Arc, Condvar, Mutex, RwLock};
use interleave_test::{Builder, Reduction, StrategyKind, Substrate, thread};

/// One instruction of a generated thread.
#[derive(Clone, Debug)]
enum Instr {
    Load(usize),
    Store(usize, usize),
    FetchAdd(usize),
    /// Runs the instructions holding mutex `m`.
    Locked(usize, Vec<Instr>),
    TryLock(usize),
    /// Runs loads holding the rwlock's read lock.
    Read(Vec<Instr>),
    /// Runs the instructions holding the rwlock's write lock.
    Write(Vec<Instr>),
    /// Sends on the thread's own sender (each thread drops its own at its end).
    Send(usize),
    TryRecv,
    Notify,
    /// Waits on the condvar holding mutex 0, until notified or a virtual second passes.
    Wait,
    Yield,
}

/// A tiny seeded generator (xorshift64*), so a failing program can be rebuilt from its seed.
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn simple(&mut self) -> Instr {
        match self.below(4) {
            0 => Instr::Load(self.below(2)),
            1 => Instr::Store(self.below(2), 1 + self.below(2)),
            2 => Instr::FetchAdd(self.below(2)),
            _ => Instr::Load(self.below(2)),
        }
    }

    fn instr(&mut self) -> Instr {
        match self.below(14) {
            0..=4 => self.simple(),
            5 | 6 => {
                let n = 1 + self.below(2);
                Instr::Locked(self.below(2), (0..n).map(|_| self.simple()).collect())
            }
            7 => Instr::TryLock(self.below(2)),
            8 => Instr::Read(vec![Instr::Load(self.below(2))]),
            9 => Instr::Write(vec![self.simple()]),
            10 => match self.below(2) {
                0 => Instr::Send(1 + self.below(2)),
                _ => Instr::TryRecv,
            },
            11 => Instr::Notify,
            12 => Instr::Wait,
            _ => Instr::Yield,
        }
    }

    /// Two threads of up to three instructions, or three of up to two (unreduced DFS must
    /// finish on them).
    fn program(&mut self) -> Vec<Vec<Instr>> {
        let threads = 2 + self.below(2);
        let most = if threads == 2 { 3 } else { 2 };
        (0..threads)
            .map(|_| {
                let n = 1 + self.below(most);
                (0..n).map(|_| self.instr()).collect()
            })
            .collect()
    }
}

/// The shared state of one execution of a program.
struct World {
    vars: [AtomicUsize; 2],
    locks: [Mutex<()>; 2],
    rw: RwLock<()>,
    rx: Mutex<Receiver<usize>>,
    cv: Condvar,
}

fn run(w: &World, tx: &Sender<usize>, instrs: &[Instr], log: &mut String) {
    for instr in instrs {
        match instr {
            Instr::Load(v) => write!(log, "l{}", w.vars[*v].load(SeqCst)).unwrap(),
            Instr::Store(v, x) => w.vars[*v].store(*x, SeqCst),
            Instr::FetchAdd(v) => write!(log, "f{}", w.vars[*v].fetch_add(1, SeqCst)).unwrap(),
            Instr::Locked(m, body) => {
                let _g = w.locks[*m].lock().unwrap();
                run(w, tx, body, log);
            }
            Instr::TryLock(m) => {
                let ok = w.locks[*m].try_lock().is_ok();
                write!(log, "t{}", u8::from(ok)).unwrap();
            }
            Instr::Read(body) => {
                let _g = w.rw.read().unwrap();
                run(w, tx, body, log);
            }
            Instr::Write(body) => {
                let _g = w.rw.write().unwrap();
                run(w, tx, body, log);
            }
            Instr::Send(x) => tx.send(*x).unwrap(),
            Instr::TryRecv => {
                let got = w.rx.lock().unwrap().try_recv().ok();
                write!(log, "r{got:?}").unwrap();
            }
            Instr::Notify => w.cv.notify_one(),
            Instr::Wait => {
                let guard = w.locks[0].lock().unwrap();
                let (_g, t) = w.cv.wait_timeout(guard, Duration::from_secs(1)).unwrap();
                write!(log, "w{}", u8::from(t.timed_out())).unwrap();
            }
            Instr::Yield => thread::yield_now(),
        }
        log.push(' ');
    }
}

/// Every outcome of `program` under DFS with `reduction` and `bound`, and the executions run;
/// `None` if the search did not finish within `cap` executions.
fn outcomes(
    program: &[Vec<Instr>],
    reduction: Reduction,
    bound: Option<u32>,
    cap: u64,
) -> Option<(BTreeSet<String>, u64)> {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .reduction(reduction)
        // What is tested is the search, not the substrate: coroutines are the fast one.
        .substrate(Substrate::Coroutines)
        .iterations(cap)
        .check(|| {
            let (tx, rx) = channel();
            let w = Arc::new(World {
                vars: [AtomicUsize::new(0), AtomicUsize::new(0)],
                locks: [Mutex::new(()), Mutex::new(())],
                rw: RwLock::new(()),
                rx: Mutex::new(rx),
                cv: Condvar::new(),
            });
            let handles: Vec<_> = program[1..]
                .iter()
                .map(|instrs| {
                    let (w, instrs, tx) = (Arc::clone(&w), instrs.clone(), tx.clone());
                    thread::spawn(move || {
                        let mut log = String::new();
                        run(&w, &tx, &instrs, &mut log);
                        log
                    })
                })
                .collect();
            let mut out = String::new();
            run(&w, &tx, &program[0], &mut out);
            drop(tx);
            for h in handles {
                out.push_str("| ");
                out.push_str(&h.join().unwrap());
            }
            let finals: Vec<usize> = w.vars.iter().map(|v| v.load(SeqCst)).collect();
            write!(out, "| {finals:?}").unwrap();
            seen.lock().unwrap().insert(out);
        })
        .unwrap_or_else(|f| panic!("{program:?}\n{f}"));
    report
        .exhausted
        .then(|| (seen.into_inner().unwrap(), report.executions))
}

/// Compares the outcomes of program `seed` with and without reduction under each bound;
/// returns the executions of both, or `None` if the unreduced search is too large.
fn check_program(seed: u64, bounds: &[Option<u32>]) -> Option<(u64, u64)> {
    let program = Gen(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).program();
    let mut totals = (0, 0);
    for &bound in bounds {
        let (all, plain) = outcomes(&program, Reduction::Off, bound, 20_000)?;
        let (reduced, runs) = outcomes(&program, Reduction::Dpor, bound, 100_000)
            .unwrap_or_else(|| panic!("seed {seed}: the reduced search did not finish"));
        let missing: Vec<_> = all.difference(&reduced).collect();
        let extra: Vec<_> = reduced.difference(&all).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "seed {seed}, bound {bound:?}: reduction missed {missing:#?}\nand found only it \
             {extra:#?}\nin {program:?}"
        );
        assert!(
            runs <= plain,
            "seed {seed}, bound {bound:?}: {runs} > {plain}"
        );
        totals.0 += plain;
        totals.1 += runs;
    }
    Some(totals)
}

/// Checks programs `seeds` under `bounds`; at least 60% of them must be small enough.
fn check_programs(seeds: std::ops::Range<u64>, bounds: &[Option<u32>]) {
    let (mut checked, mut plain, mut reduced) = (0, 0, 0);
    for seed in seeds.clone() {
        if let Some((p, r)) = check_program(seed, bounds) {
            checked += 1;
            plain += p;
            reduced += r;
        }
    }
    eprintln!("{checked} programs: {plain} executions unreduced, {reduced} reduced ({bounds:?})");
    assert!(
        checked * 10 >= seeds.count() * 6,
        "only {checked} programs were small enough"
    );
}

/// How many programs a test checks: `n`, or `DPOR_SOUNDNESS_PROGRAMS` for a longer soak.
fn programs(n: u64) -> u64 {
    std::env::var("DPOR_SOUNDNESS_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}

#[test]
fn reduction_reaches_every_outcome_of_generated_programs() {
    check_programs(0..programs(150), &[None]);
}

#[test]
fn bounded_reduction_reaches_every_outcome_within_the_bound() {
    let n = programs(60);
    check_programs(1_000_000..1_000_000 + n, &[Some(0), Some(1), Some(2)]);
}
