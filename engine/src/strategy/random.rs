//! Uniform random choice among runnable threads, as in shuttle's random scheduler and
//! "randomized testing of concurrent programs" in general: every decision picks each
//! runnable thread with equal probability, from one `Pcg64Mcg` stream seeded once per run.
//! Other decisions (which store a load reads, ...) pick each option with equal probability
//! too.

use rand::SeedableRng;
use rand::distr::uniform::{UniformSampler, UniformUsize};
use rand_pcg::Pcg64Mcg;

use super::{Choice, Pick, Refusal, Setup, Strategy};
use crate::op::Tid;

/// Random's maker (its row in `listing.rs`): the strategy of one execution, from its seed.
pub(super) fn make(setup: &Setup) -> Box<dyn Strategy> {
    Box::new(RandomStrategy::new(setup.seed))
}

/// The seed of execution `iteration` of a run seeded with `seed` (SplitMix64 finalizer over
/// both), so any execution can run alone, in any order, on any thread, and still be the same.
pub fn execution_seed(seed: u64, iteration: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(iteration.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// Random walk over schedules.
/// A uniform index below `n` (at least 1), the same draw as `rng.random_range(0..n)`. That
/// function is not marked inline, so whether it is inlined into the hot decision depended
/// on how the compiler split the crate; the sampler it calls is, and is called here.
#[inline]
pub(crate) fn uniform_below(rng: &mut Pcg64Mcg, n: usize) -> usize {
    UniformUsize::sample_single(0, n, rng).expect("there is at least one option")
}

/// Picks uniformly among the runnable threads and the options of a decision.
#[derive(Debug)]
pub struct RandomStrategy {
    /// One stream per execution, seeded by [`execution_seed`].
    rng: Pcg64Mcg,
}

impl RandomStrategy {
    pub(crate) fn new(seed: u64) -> Self {
        RandomStrategy {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }
}

impl Strategy for RandomStrategy {
    fn reads_ops(&self) -> bool {
        false
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        let runnable = choice.runnable;
        Ok(runnable[uniform_below(&mut self.rng, runnable.len())])
    }

    /// Uniform among the options, as among threads.
    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        Ok(uniform_below(&mut self.rng, pick.options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Op;

    #[test]
    fn same_seed_same_choices_and_every_thread_reachable() {
        let op = Op::start(std::panic::Location::caller());
        let picks = |seed| {
            let mut s = RandomStrategy::new(seed);
            let choice = Choice {
                runnable: &[0, 1, 2],
                ops: &[op; 3],
                current: Some(0),
                current_spins: false,
            };
            (0..200)
                .map(|_| s.choose(&choice).unwrap())
                .collect::<Vec<_>>()
        };
        let a = picks(7);
        assert_eq!(a, picks(7));
        assert_ne!(a, picks(8));
        for t in 0..3 {
            assert!(
                a.contains(&t),
                "thread {t} never chosen in 200 draws with seed 7"
            );
        }
    }

    #[test]
    fn uniform_below_draws_what_random_range_draws() {
        use rand::RngExt;
        // Seeds name executions across versions: the inlined draw must not change them.
        let mut a = Pcg64Mcg::seed_from_u64(11);
        let mut b = Pcg64Mcg::seed_from_u64(11);
        for n in (1..50).chain([1 << 20, u32::MAX as usize, 1 << 40, usize::MAX]) {
            for _ in 0..20 {
                assert_eq!(uniform_below(&mut a, n), b.random_range(0..n), "n = {n}");
            }
        }
    }
}
