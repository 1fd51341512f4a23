//! Uniform random choice among runnable threads, as in shuttle's random scheduler and
//! "randomized testing of concurrent programs" in general: every decision picks each
//! runnable thread with equal probability, from one `Pcg64Mcg` stream seeded once per run.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Divergence, Strategy};
use crate::runtime::Tid;

/// Random walk over schedules.
#[derive(Debug)]
pub(crate) struct RandomStrategy {
    /// One stream for the whole run: execution `i` depends on the seed and on `i`.
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
    fn name(&self) -> &'static str {
        "random"
    }

    fn begin_execution(&mut self) -> bool {
        true
    }

    fn choose(&mut self, runnable: &[Tid], _current: Option<Tid>) -> Result<Tid, Divergence> {
        Ok(runnable[self.rng.random_range(0..runnable.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_choices_and_every_thread_reachable() {
        let picks = |seed| {
            let mut s = RandomStrategy::new(seed);
            (0..200)
                .map(|_| s.choose(&[0, 1, 2], Some(0)).unwrap())
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
}
