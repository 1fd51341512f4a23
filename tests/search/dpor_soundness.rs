//! Soundness of partial-order reduction and of the spin rule on generated programs: for 260
//! small random programs over atomics, mutexes, rwlocks, channels, condvars, yields, bounded
//! retry loops and `Arc`s whose destructor writes shared state (200 without a bound, 60 at
//! bounds 0 to 3), and 130 more that also share a `std` atomic the model does not see
//! through explicit yields (100 without a bound, 30 at bounds 0 to 3), DFS with reduction and the spin rule (`fair_spins`, the default) reaches
//! exactly the outcomes DFS reaches without either, but for the documented exception: a
//! retry loop of two or more tries that gave up before another thread acted. Under a bound,
//! it must also reach exactly what plain DFS with the rule reaches (bounded POR and its sleep
//! sets against no reduction), and what it reaches beyond plain DFS without the rule must be
//! real (see `check_program`).
//!
//! An outcome is everything a program observes: each thread's loaded values and try-results
//! in order, and the final values. Reduction may only skip schedules that are equivalent to
//! one it runs, and the spin rule only schedules in which a thread repeats a spin before the
//! others run, so the sets must be equal but for that exception. Each program is printed with
//! its seed on failure. Programs whose unreduced search exceeds 5,000 executions are skipped
//! (at most half of them may be, and at least 100 of the unbounded ones must be compared);
//! `DPOR_SOUNDNESS_PROGRAMS=N` checks `N` programs per test, for a soak, and
//! `DPOR_SOUNDNESS_SEED=S` (with `N` large enough to include it) checks program `S` alone.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::mpsc::{Receiver, Sender, channel};
use interleave_test::sync::{Arc, Condvar, Mutex, RwLock};
// The world every thread shares is plumbing, not under test: std's `Arc`, whose drops are
// not switch points, keeps the searches small.
use interleave_test::{Builder, Reduction, StrategyKind, Substrate, thread};
use std::sync::Arc as Plumbing;

/// The tests of this file choose their substrates themselves: CI's second pass, on OS
/// threads, skips them (`--skip own_substrates::`), since it would only repeat the first.
mod own_substrates {
    use super::*;

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
        /// Up to `n` tries: load var `v`, stop if it is set, else yield; logs whether it gave up.
        Retry(usize, usize),
        /// Drops the thread's reference to the shared [`Bump`], if it still holds it.
        DropArc,
        /// Stores into the `std` atomic the model does not see, then yields.
        HiddenStore(usize),
        /// Yields, then loads the `std` atomic.
        HiddenLoad,
        /// Loads the `std` atomic with no yield next to it: it reads only, and every write is
        /// next to a yield (`hb/unseen.rs`: one side of each shared access is).
        BareHiddenLoad,
    }

    /// Adds 10 to var 1 when the last reference to it is dropped: which thread's drop is the
    /// last decides who does that, and when.
    struct Bump(Plumbing<World>);

    impl Drop for Bump {
        fn drop(&mut self) {
            self.0.vars[1].fetch_add(10, SeqCst);
        }
    }

    /// A tiny seeded generator (xorshift64*), so a failing program can be rebuilt from its
    /// seed; `.1`: its programs also share a `std` atomic the model does not see.
    struct Gen(u64, bool);

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
            match self.below(if self.1 { 19 } else { 16 }) {
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
                13 => Instr::Yield,
                14 => Instr::Retry(self.below(2), 2 + self.below(2)),
                15 => Instr::DropArc,
                16 => Instr::HiddenStore(1 + self.below(2)),
                17 => Instr::HiddenLoad,
                _ => Instr::BareHiddenLoad,
            }
        }

        /// Two threads of up to three instructions, or three of up to two (unreduced DFS must
        /// finish on them).
        fn program(&mut self) -> Vec<Vec<Instr>> {
            let threads = 2 + self.below(2);
            // Programs that share unseen state yield more: two threads of up to three
            // instructions would often be too large for the unreduced search.
            let most = if threads == 2 && !self.1 { 3 } else { 2 };
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
        /// State the model does not see.
        hidden: std::sync::atomic::AtomicUsize,
    }

    /// What one thread runs with: the world, its sender, its reference to the [`Bump`].
    struct Own<'a> {
        w: &'a World,
        tx: &'a Sender<usize>,
        bump: Option<Arc<Bump>>,
    }

    /// Runs `instrs`, each one frame deeper than the one before: generated threads are
    /// straight-line code, and a loop of the interpreter that reached the same line again by the
    /// same path would look like a thread repeating its steps (`Retry` is the only loop).
    fn run(own: &mut Own<'_>, instrs: &[Instr], log: &mut String) {
        if let Some((instr, rest)) = instrs.split_first() {
            step(own, instr, log);
            run(own, rest, log);
            // Not a tail call, which an optimized build could turn into a loop.
            std::hint::black_box(&*log);
        }
    }

    fn step(own: &mut Own<'_>, instr: &Instr, log: &mut String) {
        let (w, tx) = (own.w, own.tx);
        {
            match instr {
                Instr::Load(v) => write!(log, "l{}", w.vars[*v].load(SeqCst)).unwrap(),
                Instr::Store(v, x) => w.vars[*v].store(*x, SeqCst),
                Instr::FetchAdd(v) => write!(log, "f{}", w.vars[*v].fetch_add(1, SeqCst)).unwrap(),
                Instr::Locked(m, body) => {
                    let _g = w.locks[*m].lock().unwrap();
                    run(own, body, log);
                }
                Instr::TryLock(m) => {
                    let ok = w.locks[*m].try_lock().is_ok();
                    write!(log, "t{}", u8::from(ok)).unwrap();
                }
                Instr::Read(body) => {
                    let _g = w.rw.read().unwrap();
                    run(own, body, log);
                }
                Instr::Write(body) => {
                    let _g = w.rw.write().unwrap();
                    run(own, body, log);
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
                Instr::Retry(v, n) => {
                    let seen = (0..*n).any(|_| {
                        let set = w.vars[*v].load(SeqCst) != 0;
                        if !set {
                            thread::yield_now();
                        }
                        set
                    });
                    write!(log, "{}{n}", if seen { "y" } else { "g" }).unwrap();
                }
                Instr::DropArc => drop(own.bump.take()),
                Instr::HiddenStore(x) => {
                    w.hidden.store(*x, SeqCst);
                    thread::yield_now();
                }
                Instr::HiddenLoad => {
                    thread::yield_now();
                    write!(log, "h{}", w.hidden.load(SeqCst)).unwrap();
                }
                Instr::BareHiddenLoad => write!(log, "b{}", w.hidden.load(SeqCst)).unwrap(),
            }
            log.push(' ');
        }
    }

    /// Every outcome of `program` under DFS with `reduction` and `bound`, and the executions run;
    /// `None` if the search did not finish within `cap` executions.
    fn outcomes(
        program: &[Vec<Instr>],
        (reduction, fair): (Reduction, bool),
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
            .fair_spins(fair)
            .check(|| {
                let (tx, rx) = channel();
                let w = Plumbing::new(World {
                    vars: [AtomicUsize::new(0), AtomicUsize::new(0)],
                    locks: [Mutex::new(()), Mutex::new(())],
                    rw: RwLock::new(()),
                    rx: Mutex::new(rx),
                    cv: Condvar::new(),
                    hidden: std::sync::atomic::AtomicUsize::new(0),
                });
                let drops = program
                    .iter()
                    .flatten()
                    .any(|i| matches!(i, Instr::DropArc));
                let bump = drops.then(|| Arc::new(Bump(Plumbing::clone(&w))));
                let handles: Vec<_> = program[1..]
                    .iter()
                    .map(|instrs| {
                        let (w, instrs, tx) = (Plumbing::clone(&w), instrs.clone(), tx.clone());
                        let bump = bump.clone();
                        thread::spawn(move || {
                            let mut log = String::new();
                            let mut own = Own {
                                w: &w,
                                tx: &tx,
                                bump,
                            };
                            run(&mut own, &instrs, &mut log);
                            log
                        })
                    })
                    .collect();
                let mut out = String::new();
                let mut own = Own {
                    w: &w,
                    tx: &tx,
                    bump,
                };
                run(&mut own, &program[0], &mut out);
                drop(own);
                drop(tx);
                for h in handles {
                    out.push_str("| ");
                    out.push_str(&h.join().unwrap());
                }
                let mut finals: Vec<usize> = w.vars.iter().map(|v| v.load(SeqCst)).collect();
                finals.push(w.hidden.load(SeqCst));
                write!(out, "| {finals:?}").unwrap();
                seen.lock().unwrap().insert(out);
            })
            .unwrap_or_else(|f| panic!("{program:?}\n{f}"));
        report
            .exhausted
            .then(|| (seen.into_inner().unwrap(), report.executions))
    }

    /// Whether `outcome` is one the spin rule may skip: a retry loop of two or more tries gave
    /// up. The rule holds a thread back at its third visit of a point by one call path: the
    /// third try of a loop, or the second when an earlier loop ran from the same place.
    fn documented_exception(outcome: &str) -> bool {
        outcome.split(' ').any(|word| {
            word.strip_prefix('g')
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 2)
        })
    }

    /// Compares the outcomes of program `seed` with reduction and the spin rule against those
    /// without either, under each bound; returns the executions of both, or `None` if the
    /// unreduced search is too large.
    ///
    /// Under a bound, the reduced search must also reach exactly what plain DFS with the spin
    /// rule reaches (bounded POR and its sleep sets against no reduction), and may reach
    /// outcomes plain DFS without the rule does not: a thread the rule holds is not running, so
    /// switching away from it is no preemption, and a behaviour can cost fewer preemptions with
    /// the rule than without. Such an outcome must still be real: one the search without
    /// either reaches with no bound.
    fn check_program(seed: u64, bounds: &[Option<u32>], unseen: bool) -> Option<(u64, u64)> {
        let program = Gen(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, unseen).program();
        let mut totals = (0, 0);
        let mut real = None;
        for &bound in bounds {
            let (all, plain) = outcomes(&program, (Reduction::Off, false), bound, 5_000)?;
            let (reduced, runs) = outcomes(&program, (Reduction::Dpor, true), bound, 100_000)
                .unwrap_or_else(|| panic!("seed {seed}: the reduced search did not finish"));
            if bound.is_some() {
                let (fair, _) = outcomes(&program, (Reduction::Off, true), bound, 5_000)?;
                assert_eq!(
                    fair, reduced,
                    "seed {seed}, bound {bound:?}: bounded reduction and plain DFS under the \
                     spin rule differ\nin {program:?}"
                );
            }
            let missing: Vec<_> = all
                .difference(&reduced)
                .filter(|o| !documented_exception(o))
                .collect();
            let mut extra: Vec<_> = reduced.difference(&all).collect();
            if bound.is_some() && !extra.is_empty() {
                if real.is_none() {
                    real = Some(outcomes(&program, (Reduction::Off, false), None, 20_000)?.0);
                }
                let real = real.as_ref().expect("computed above");
                extra.retain(|o| !real.contains(*o));
            }
            assert!(
                missing.is_empty() && extra.is_empty(),
                "seed {seed}, bound {bound:?}: reduction and the spin rule missed {missing:#?}\nand \
             found only they {extra:#?}\nin {program:?}"
            );
            totals.0 += plain;
            totals.1 += runs;
        }
        Some(totals)
    }

    /// Checks programs `seeds` under `bounds`; at least 60% of them, and at least `least`, must be
    /// small enough.
    /// `DPOR_SOUNDNESS_SEED=S` checks program `S` alone, to reproduce a failure.
    fn check_programs(
        seeds: std::ops::Range<u64>,
        bounds: &[Option<u32>],
        least: u64,
        unseen: bool,
    ) {
        if let Ok(seed) = std::env::var("DPOR_SOUNDNESS_SEED") {
            let seed = seed
                .parse()
                .expect("DPOR_SOUNDNESS_SEED is a program's seed");
            if seeds.contains(&seed) {
                assert!(
                    check_program(seed, bounds, unseen).is_some(),
                    "seed {seed} is too large"
                );
            }
            return;
        }
        let (mut checked, mut plain, mut reduced) = (0, 0, 0);
        for seed in seeds.clone() {
            if let Some((p, r)) = check_program(seed, bounds, unseen) {
                checked += 1;
                plain += p;
                reduced += r;
            }
        }
        eprintln!(
            "{checked} programs: {plain} executions unreduced, {reduced} reduced ({bounds:?})"
        );
        let count = seeds.count() as u64;
        assert!(
            checked * 2 >= count && checked >= least.min(count),
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
        check_programs(0..programs(200), &[None], 100, false);
    }

    /// Programs that also share a `std` atomic the model does not see, each access next to
    /// an explicit yield or a read racing with a write next to one (`hb/unseen.rs`).
    #[test]
    fn reduction_reaches_every_outcome_of_programs_sharing_unseen_state() {
        check_programs(2_000_000..2_000_000 + programs(100), &[None], 50, true);
    }

    #[test]
    fn bounded_reduction_reaches_every_outcome_of_programs_sharing_unseen_state() {
        let n = programs(30);
        check_programs(
            3_000_000..3_000_000 + n,
            &[Some(0), Some(1), Some(2), Some(3)],
            0,
            true,
        );
    }

    #[test]
    fn bounded_reduction_reaches_every_outcome_within_the_bound() {
        let n = programs(60);
        check_programs(
            1_000_000..1_000_000 + n,
            &[Some(0), Some(1), Some(2), Some(3)],
            0,
            false,
        );
    }
}
