//! Counting the distinct schedules of a random or PCT run in memory that does not grow with
//! the number of executions.
//!
//! Each execution's decisions are hashed to 64 bits (two schedules with one hash count as
//! one). The hashes are kept exactly, in a set, up to [`EXACT_LIMIT`] distinct ones; past
//! that the set is replaced by a HyperLogLog sketch (Flajolet, Fusy, Gandouet and Meunier,
//! "HyperLogLog: the analysis of a near-optimal cardinality estimation algorithm", AofA
//! 2007) of `2^14` one-byte registers (16 KiB), read with Ertl's improved estimator ("New
//! cardinality estimation algorithms for HyperLogLog sketches", 2017, section 3.4), which
//! needs no bias tables and keeps the standard error near `1.04 / sqrt(2^14)`, about 0.8%,
//! from a few thousand to billions (the original estimator, with linear counting for small
//! counts, errs by up to 3% near its switch between the two). A [`Distinct`] then holds at
//! most the set of [`EXACT_LIMIT`] hashes (about 72 KiB) or the sketch, whatever the
//! number of executions.
//!
//! Invariant: the result depends only on the set of hashes inserted, not on how they were
//! split between the drivers' counters or in which order they were merged: a union of exact
//! sets stays exact while it has at most [`EXACT_LIMIT`] hashes (then every part had at most
//! as many), and a sketch's registers are the maximum over its hashes, which merging keeps.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

/// The most distinct schedules counted exactly.
pub(crate) const EXACT_LIMIT: usize = 4096;

/// Bits of a hash that choose a register.
const P: u32 = 14;
/// Registers of a sketch.
const M: usize = 1 << P;
/// Bits of a hash left for the rank: a register holds at most `Q + 1`.
const Q: u32 = 64 - P;

/// Distinct hashes seen, exactly or estimated (see the module).
#[derive(Debug, Default)]
pub(crate) struct Distinct {
    /// The hashes seen, until more than [`EXACT_LIMIT`] distinct ones were (`None` before
    /// the first one, and once there is a sketch).
    exact: Option<HashSet<u64, Mix>>,
    /// Every hash seen, once there were more than [`EXACT_LIMIT`].
    sketch: Option<Box<Sketch>>,
}

impl Distinct {
    /// Counts `hash`.
    #[inline]
    pub(crate) fn insert(&mut self, hash: u64) {
        if let Some(sketch) = &mut self.sketch {
            return sketch.insert(hash);
        }
        let exact = self.exact.get_or_insert_with(HashSet::default);
        if exact.len() < EXACT_LIMIT || exact.contains(&hash) {
            exact.insert(hash);
            return;
        }
        self.sketch_mut().insert(hash);
    }

    /// Adds the hashes counted by `other`.
    pub(crate) fn merge(&mut self, other: Distinct) {
        if let Some(exact) = other.exact {
            for hash in exact {
                self.insert(hash);
            }
        } else if let Some(theirs) = other.sketch {
            self.sketch_mut().merge(&theirs);
        }
    }

    /// The number of distinct hashes, and whether it is exact (else an estimate).
    pub(crate) fn count(&self) -> (u64, bool) {
        match (&self.sketch, &self.exact) {
            (Some(sketch), _) => (sketch.estimate(), false),
            (None, exact) => (exact.as_ref().map_or(0, |e| e.len() as u64), true),
        }
    }

    /// The sketch, made from the exact set first if there is none yet.
    fn sketch_mut(&mut self) -> &mut Sketch {
        let exact = self.exact.take();
        let sketch = self.sketch.get_or_insert_with(|| Box::new(Sketch::new()));
        for hash in exact.into_iter().flatten() {
            sketch.insert(hash);
        }
        sketch
    }
}

/// A HyperLogLog sketch: register `j` holds the largest rank (position of the first 1 bit,
/// from 1) among the mixed hashes whose first [`P`] bits are `j`.
#[derive(Debug)]
struct Sketch {
    registers: Box<[u8]>,
}

impl Sketch {
    fn new() -> Self {
        Sketch {
            registers: vec![0; M].into_boxed_slice(),
        }
    }

    #[inline]
    fn insert(&mut self, hash: u64) {
        let x = mix(hash);
        let index = (x >> (64 - P)) as usize;
        // The remaining Q bits, with a 1 after them so that the rank is at most Q + 1.
        let rest = (x << P) | (1 << (P - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        let register = &mut self.registers[index];
        *register = (*register).max(rank);
    }

    fn merge(&mut self, other: &Sketch) {
        for (mine, theirs) in self.registers.iter_mut().zip(other.registers.iter()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// The estimated number of distinct hashes inserted: Ertl's improved estimator (see
    /// the module), from the histogram of register values.
    fn estimate(&self) -> u64 {
        let mut histogram = [0u32; Q as usize + 2];
        for &r in self.registers.iter() {
            histogram[usize::from(r)] += 1;
        }
        let m = M as f64;
        let mut z = m * tau(1.0 - f64::from(histogram[Q as usize + 1]) / m);
        for &count in histogram[1..=Q as usize].iter().rev() {
            z = 0.5 * (z + f64::from(count));
        }
        z += m * sigma(f64::from(histogram[0]) / m);
        let alpha = 0.5 / std::f64::consts::LN_2;
        (alpha * m * m / z).round() as u64
    }
}

/// Ertl's `sigma(x) = x + sum over k >= 1 of x^(2^k) 2^(k-1)`, for the empty registers.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// Ertl's `tau(x) = (1 - x - sum over k >= 1 of (1 - x^(2^-k))^2 2^-k) / 3`, for the
/// registers at the largest rank.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

/// A 64-bit finalizer (MurmurHash3's `fmix64`): every bit of the result depends on every
/// bit of `h`, which the sketch's register index and rank need and FNV-1a alone does not
/// give for short inputs.
#[inline]
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The exact set's hasher: the schedule hashes are hashes already, mixed once more.
#[derive(Clone, Copy, Debug, Default)]
struct Mix;

impl BuildHasher for Mix {
    type Hasher = MixHasher;

    fn build_hasher(&self) -> MixHasher {
        MixHasher(0)
    }
}

/// See [`Mix`].
#[derive(Debug)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0 ^ n);
    }
}

#[cfg(test)]
mod tests {
    use super::{Distinct, EXACT_LIMIT, mix};

    /// `n` distinct hashes, `first..first + n` mixed (any injective stream would do).
    fn hashes(first: u64, n: u64) -> impl Iterator<Item = u64> {
        (first..first + n).map(|i| mix(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }

    fn counted(first: u64, n: u64) -> Distinct {
        let mut d = Distinct::default();
        for h in hashes(first, n) {
            d.insert(h);
            d.insert(h); // a repeat counts once
        }
        d
    }

    #[test]
    fn exact_up_to_the_limit() {
        assert_eq!(Distinct::default().count(), (0, true));
        assert_eq!(counted(0, 10).count(), (10, true));
        let limit = EXACT_LIMIT as u64;
        assert_eq!(counted(0, limit).count(), (limit, true));
        let (n, exact) = counted(0, limit + 1).count();
        assert!(!exact);
        assert!(n.abs_diff(limit + 1) <= limit / 100, "{n}");
    }

    /// The estimate is within 2% of the truth from the limit to ten million (the
    /// standard error is 0.8%; these streams are fixed, so the figures are too).
    #[test]
    fn estimates_are_within_two_percent() {
        for n in [
            5_000, 12_000, 30_000, 40_000, 50_000, 80_000, 200_000, 10_000_000,
        ] {
            let (estimate, exact) = counted(1 << 40, n).count();
            assert!(!exact, "{n}");
            let error = estimate.abs_diff(n) as f64 / n as f64;
            assert!(error < 0.02, "{n}: estimated {estimate}, error {error:.4}");
        }
    }

    /// Merging in any split gives what one counter of every hash gives.
    #[test]
    fn merging_does_not_depend_on_the_split() {
        let whole = counted(7, 60_000).count();
        for split in [0, 100, EXACT_LIMIT as u64, 30_000, 59_999] {
            let mut a = counted(7, split);
            a.merge(counted(7 + split, 60_000 - split));
            assert_eq!(a.count(), whole, "split at {split}");
        }
        // Two exact halves whose union is past the limit become a sketch.
        let mut a = counted(0, 3000);
        a.merge(counted(3000, 3000));
        let mut one = Distinct::default();
        hashes(0, 6000).for_each(|h| one.insert(h));
        assert_eq!(a.count(), one.count());
        assert!(!a.count().1);
        // Overlapping exact sets stay exact.
        let mut a = counted(0, 3000);
        a.merge(counted(1000, 3000));
        assert_eq!(a.count(), (4000, true));
    }
}
