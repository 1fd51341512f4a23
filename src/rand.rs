//! The model's random number generator, with the `rand` crate's names: every draw is a
//! decision of the search, recorded in the schedule and replayed exactly.
//!
//! [`rng()`] gives a [`ThreadRng`] that implements `rand` 0.10's
//! [`TryRng`] (so [`Rng`] and [`RngExt`]: `random`, `random_range`, `random_bool`, ... and
//! [`seq`]'s `shuffle` and `choose` work on it), and the free functions [`random`],
//! [`random_range`], [`random_bool`], [`random_ratio`], [`random_iter`] and [`fill`] draw
//! from it, as `rand`'s draw from a thread's generator. Code written against `rand`
//! switches with one `use` line:
//!
//! ```
//! #[cfg(interleave)]
//! use interleave_test::rand::{RngExt, rng};
//! #[cfg(not(interleave))]
//! use rand::{RngExt, rng};
//!
//! fn backoff_ms() -> u64 {
//!     rng().random_range(1..=8)
//! }
//! # fn main() {}
//! ```
//!
//! With the crate feature `rand08`, [`ThreadRng`] also implements `rand`
//! 0.8's `RngCore` (so 0.8's `Rng` extension methods: `gen`, `gen_range`, ...), and
//! `thread_rng()` gives it by 0.8's name. Those are the two majors supported; 0.9's traits
//! are not implemented.
//!
//! Random and PCT draw the values from the run's seed: one seed, one sequence of draws.
//! Each draw is 32 random bits (a `u64` is two draws), recorded as the pick `random`. A
//! depth-first search cannot explore 2^32 values per draw, so a draw under DFS is a
//! `Misuse` failure that says what to write instead: [`choose`](fn@crate::choose) and
//! [`choose_from`](crate::choose_from) give values that DFS explores one by one. The
//! generator keeps no state of its own (every value comes from the strategy), so all
//! `ThreadRng`s of an execution draw from the one sequence of decisions, in the order the
//! threads draw. A draw while its thread unwinds from a panic (in a destructor) is 0 and
//! decides nothing, under every strategy: the panic is the failure. Outside a model every
//! draw is 0, the first option, as every decision there: code that needs varied values
//! outside a model takes them from a generator of its own.

use std::convert::Infallible;

pub use ::rand::{Fill, Rng, RngExt, SeedableRng, TryRng, distr, seq};

use distr::uniform::{SampleRange, SampleUniform};
use distr::{Distribution, StandardUniform};

/// Generators, at `rand`'s path for them.
pub mod rngs {
    /// The model's random number generator: each draw is a decision of the search (see the
    /// [module](super)). Cheap to make and to clone; it holds nothing.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct ThreadRng {
        _private: (),
    }
}

use rngs::ThreadRng;

/// The calling model thread's random number generator, as `rand::rng()` gives a thread's.
pub fn rng() -> ThreadRng {
    ThreadRng::default()
}

/// A value of `T` from the model's generator, as `rand::random` draws one from a thread's.
pub fn random<T>() -> T
where
    StandardUniform: Distribution<T>,
{
    rng().random()
}

/// An endless iterator of values of `T` from the model's generator (`rand::random_iter`).
pub fn random_iter<T>() -> distr::Iter<StandardUniform, ThreadRng, T>
where
    StandardUniform: Distribution<T>,
{
    rng().random_iter()
}

/// A value in `range` from the model's generator (`rand::random_range`).
pub fn random_range<T, R>(range: R) -> T
where
    T: SampleUniform,
    R: SampleRange<T>,
{
    rng().random_range(range)
}

/// `true` with probability `p` (`rand::random_bool`; panics unless `0 <= p <= 1`).
#[track_caller]
pub fn random_bool(p: f64) -> bool {
    rng().random_bool(p)
}

/// `true` with probability `numerator / denominator` (`rand::random_ratio`).
#[track_caller]
pub fn random_ratio(numerator: u32, denominator: u32) -> bool {
    rng().random_ratio(numerator, denominator)
}

/// Fills `dest` with random values (`rand::fill`).
pub fn fill<T: Fill>(dest: &mut [T]) {
    Fill::fill_slice(dest, &mut rng());
}

/// [`rng()`] by `rand` 0.8's name (crate feature `rand08`).
#[cfg(feature = "rand08")]
pub fn thread_rng() -> ThreadRng {
    ThreadRng::default()
}

/// 32 bits, a decision of the search.
#[track_caller]
fn next_u32() -> u32 {
    crate::primitive::data::draw("interleave_test::rand")
}

/// 64 bits: two draws, the high half first.
#[track_caller]
fn next_u64() -> u64 {
    let high = u64::from(next_u32());
    (high << 32) | u64::from(next_u32())
}

/// Fills `dst` with draws, four bytes per draw, little-endian.
#[track_caller]
fn fill_bytes(dst: &mut [u8]) {
    for chunk in dst.chunks_mut(4) {
        let bytes = next_u32().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

impl TryRng for ThreadRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(next_u32())
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        fill_bytes(dst);
        Ok(())
    }
}

#[cfg(feature = "rand08")]
impl rand08::RngCore for ThreadRng {
    fn next_u32(&mut self) -> u32 {
        next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        next_u64()
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        fill_bytes(dst);
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand08::Error> {
        fill_bytes(dst);
        Ok(())
    }
}
