//! Modelled atomics, with the names, paths and signatures of [`std::sync::atomic`].
//!
//! Every operation on a shared atomic is a switch point: the explorer may run another thread
//! just before the load, store or read-modify-write takes effect, so a check-then-act race
//! such as `let v = x.load(SeqCst); x.store(v + 1, SeqCst)` is found.
//!
//! # The memory model
//! Atomics honour their [`Ordering`] as the C++/Rust memory model (RC11) allows: a load may
//! read any store that coherence and happens-before allow, not only the newest (a `Relaxed`
//! flag seen set says nothing about the data written before it); `Release` stores read by
//! `Acquire` loads, fences, read-modify-writes (which always read the newest store and
//! continue release sequences) and `SeqCst` behave as the model says. Which store a load
//! reads, and where a store goes in modification order, are decisions of the search like
//! the choice of a thread: DFS explores every one (a load's oldest store first, where stale
//! reads find bugs soonest), random and PCT pick
//! uniformly, and the schedule records them. Every load is free to read a stale value except
//! after its thread spun (`yield_now`, `hint::spin_loop`, a failed `try_lock`) or, under
//! DFS, repeated a spin: a thread that waits for another one then sees the newest stores,
//! so a spin loop ends. See the
//! crate's `memory` notes in ARCHITECTURE.md for how `SeqCst` is modelled and where it is
//! stronger than RC11.
//!
//! # Differences from std
//! - `compare_exchange_weak` may fail spuriously where it could succeed (a decision), as std
//!   allows; [`Builder::spurious_wakeups`](crate::Builder::spurious_wakeups) turns that off.
//!   A failing compare-and-exchange may read an older value than the newest.
//! - `fetch_update`, `try_update` and `update` are a load followed by one `compare_exchange`
//!   per attempt, each a switch point: another thread may change the value in between, and
//!   the closure is then called again, as on real hardware.
//! - Outside a model (a plain `#[test]`, on any OS thread) every operation is std's own on
//!   the value the atomic holds, with no switch point: the atomic is the original there.
//!   `new`, `get_mut`, `into_inner`, `Default` and `From` are not switch points anywhere;
//!   nor is `Debug`, which reads the value without one.
//! - `into_inner` is not a `const fn`: inside a model, the running execution holds the
//!   value.
//! - [`compiler_fence`] is not a switch point (it orders nothing between threads); it only
//!   validates its ordering and works anywhere. [`fence`] is a switch point.
//! - The types are larger than std's (each carries its registration in the execution) and
//!   have no `as_ptr`, `from_ptr` or other `unsafe` or unstable methods.

mod atomic_bool;
mod atomic_ptr;
mod int;
pub mod ops;

use std::panic::Location;

pub use std::sync::atomic::Ordering;

pub use atomic_bool::AtomicBool;
pub use atomic_ptr::AtomicPtr;
pub use int::{
    AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU8, AtomicU16, AtomicU32,
    AtomicU64, AtomicUsize,
};

use crate::primitive::{self, ObjectHandle, atomics};

/// The ordering the facade's value is read and written with. It is written only through
/// `&mut` (`get_mut`, `new`), and read only by the thread that holds the atomic or by a
/// model thread before its execution's first use of it, which that thread's spawn or a
/// hand-off orders after the write: relaxed loads and stores suffice.
const RUN: Ordering = Ordering::Relaxed;

/// A memory fence, as [`std::sync::atomic::fence`]: a `Release` fence makes the relaxed
/// stores after it publish what came before it, an `Acquire` fence makes what the relaxed
/// loads before it read acquired, and a `SeqCst` fence also takes part in the single order
/// of `SeqCst` operations. A switch point; outside a model, std's own fence.
///
/// # Panics
/// If `order` is `Relaxed`, as std does.
#[track_caller]
pub fn fence(order: Ordering) {
    if order == Ordering::Relaxed {
        panic!(
            "interleave_test::sync::atomic::fence: there is no such thing as a relaxed fence \
             (std panics here too); use Acquire, Release, AcqRel or SeqCst"
        );
    }
    let loc = Location::caller();
    if primitive::switch_point_in_model(ops::FENCE, None, loc).is_none() {
        // Outside a model atomics are std's own (see `perform`'s fallback): so is the fence.
        return std::sync::atomic::fence(order);
    }
    atomics::fence(order);
}

/// A compiler-only fence, as [`std::sync::atomic::compiler_fence`]. Not a switch point: it
/// orders nothing between threads. Works outside a model too.
///
/// # Panics
/// If `order` is `Relaxed`, as std does.
#[track_caller]
pub fn compiler_fence(order: Ordering) {
    if order == Ordering::Relaxed {
        panic!(
            "interleave_test::sync::atomic::compiler_fence: there is no such thing as a relaxed \
             compiler fence (std panics here too); use Acquire, Release, AcqRel or SeqCst"
        );
    }
    std::sync::atomic::compiler_fence(order);
}

/// A value an atomic holds, as the 64 bits the memory model keeps of it.
pub(crate) trait Bits: Copy {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! int_bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn to_bits(self) -> u64 {
                self as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}
int_bits!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Bits for bool {
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

impl<T> Bits for *mut T {
    /// The address, its provenance exposed so that [`from_bits`](Bits::from_bits) may
    /// rebuild the pointer (a load may return a pointer stored long before).
    fn to_bits(self) -> u64 {
        self.expose_provenance() as u64
    }
    fn from_bits(bits: u64) -> Self {
        std::ptr::with_exposed_provenance_mut(bits as usize)
    }
}

/// Panics as std does for an ordering that `method` of the atomic `handle` does not allow.
#[cold]
#[track_caller]
fn misordered(handle: &ObjectHandle, method: &str, what: &str, allowed: &str) -> ! {
    panic!(
        "interleave_test::sync::atomic::{}::{method}: there is no such thing as {what} \
         (std panics here too); use {allowed}",
        handle.kind()
    )
}

/// Validates the ordering of a load, as std does.
#[track_caller]
fn check_load(handle: &ObjectHandle, method: &str, order: Ordering) {
    match order {
        Ordering::Release => misordered(
            handle,
            method,
            "a release load",
            "Relaxed, Acquire or SeqCst",
        ),
        Ordering::AcqRel => misordered(
            handle,
            method,
            "an acquire-release load",
            "Relaxed, Acquire or SeqCst",
        ),
        _ => {}
    }
}

/// Validates the ordering of a store, as std does.
#[track_caller]
fn check_store(handle: &ObjectHandle, method: &str, order: Ordering) {
    match order {
        Ordering::Acquire => misordered(
            handle,
            method,
            "an acquire store",
            "Relaxed, Release or SeqCst",
        ),
        Ordering::AcqRel => misordered(
            handle,
            method,
            "an acquire-release store",
            "Relaxed, Release or SeqCst",
        ),
        _ => {}
    }
}

/// Validates the failure (or fetch) ordering of a compare-and-exchange, as std does.
#[track_caller]
fn check_failure(handle: &ObjectHandle, method: &str, order: Ordering) {
    let allowed = "Relaxed, Acquire or SeqCst as the failure ordering";
    match order {
        Ordering::Release => misordered(handle, method, "a release failure ordering", allowed),
        Ordering::AcqRel => misordered(
            handle,
            method,
            "an acquire-release failure ordering",
            allowed,
        ),
        _ => {}
    }
}

/// The failure ordering std's deprecated `compare_and_swap` derives from its one ordering.
fn cas_failure_order(order: Ordering) -> Ordering {
    match order {
        Ordering::Release => Ordering::Relaxed,
        Ordering::AcqRel => Ordering::Acquire,
        other => other,
    }
}

/// The loop behind `fetch_update`, `try_update` and `update`: load, then offer `f`'s new
/// value with a compare-and-exchange until it succeeds or `f` declines (`None`). `load` and
/// `exchange` are the atomic's own operations, each with its switch point.
fn update_loop<T: Copy>(
    load: impl Fn() -> T,
    exchange: impl Fn(T, T) -> Result<T, T>,
    mut f: impl FnMut(T) -> Option<T>,
) -> Result<T, T> {
    let mut prev = load();
    while let Some(next) = f(prev) {
        match exchange(prev, next) {
            Ok(old) => return Ok(old),
            Err(actual) => prev = actual,
        }
    }
    Err(prev)
}

/// Methods every atomic type has, generated for value type `$t` on a type with fields
/// `handle: ObjectHandle` and `inner` (a std atomic holding the value outside executions,
/// and from which an execution that first uses the atomic starts: during an execution,
/// the runtime's memory holds the one copy of the value).
macro_rules! common_methods {
    ($t:ty) => {
        /// Where an execution that first uses this atomic starts it from: the facade's
        /// value, and the initial one.
        #[inline]
        fn seed(&self) -> super::atomics::Seed {
            super::atomics::Seed {
                now: super::Bits::to_bits(self.inner.load(super::RUN)),
                init: super::Bits::to_bits(self.init_value()),
            }
        }

        /// The value: the running execution's if it holds it, else the facade's.
        fn value(&self) -> $t {
            super::atomics::value(&self.handle)
                .map_or_else(|| self.inner.load(super::RUN), super::Bits::from_bits)
        }

        /// Takes the value back from the running execution, if it holds it, for `&mut`
        /// access (proof that no other thread can reach the atomic).
        fn take_back(&mut self) {
            if let Some(bits) = super::atomics::lend(&self.handle) {
                *self.inner.get_mut() = super::Bits::from_bits(bits);
            }
        }

        /// Performs `act` as operation `kind` at `loc`, with `orders` (its switch point
        /// included): one call into the runtime.
        #[inline]
        fn perform(
            &self,
            (kind, loc): (crate::primitive::OpKind, crate::primitive::Loc),
            orders: [Ordering; 2],
            act: super::atomics::Act<'_>,
        ) -> Result<u64, u64> {
            match super::atomics::perform(&(kind, &self.handle, loc), self.seed(), orders, act) {
                Some(done) => done,
                None => self.outside(orders, act),
            }
        }

        /// Performs `act` outside a model: with std's own operation on the facade's value,
        /// which is the original atomic there, on any OS thread (no execution holds it).
        fn outside(&self, orders: [Ordering; 2], act: super::atomics::Act<'_>) -> Result<u64, u64> {
            use super::Bits;
            use super::atomics::Act;
            let bits = |v: $t| v.to_bits();
            match act {
                Act::Load => Ok(bits(self.inner.load(orders[0]))),
                Act::Store(new) => {
                    self.inner.store(<$t as Bits>::from_bits(new), orders[0]);
                    Ok(new)
                }
                Act::Rmw(f) => {
                    let next = |v: $t| Some(<$t as Bits>::from_bits(f(v.to_bits())));
                    let fetch = super::cas_failure_order(orders[0]);
                    let old = self.inner.fetch_update(orders[0], fetch, next);
                    Ok(bits(old.unwrap_or_else(|v| v)))
                }
                Act::Exchange { expected, new, .. } => self
                    .inner
                    .compare_exchange(
                        <$t as Bits>::from_bits(expected),
                        <$t as Bits>::from_bits(new),
                        orders[0],
                        orders[1],
                    )
                    .map(bits)
                    .map_err(bits),
            }
        }

        /// A load with `order`, as operation `kind` at `loc` (its switch point included).
        #[inline]
        fn load_at(
            &self,
            kind: crate::primitive::OpKind,
            loc: crate::primitive::Loc,
            order: Ordering,
        ) -> $t {
            let read = self.perform((kind, loc), [order; 2], super::atomics::Act::Load);
            super::Bits::from_bits(read.unwrap_or_else(|bits| bits))
        }

        /// A read-modify-write that always writes `f(old)`, as operation `kind` (one of
        /// [`ops`](crate::sync::atomic::ops)) at `loc`: for a primitive layered over this crate, which records its
        /// caller's place rather than its own.
        #[inline]
        pub fn rmw_at(
            &self,
            kind: crate::primitive::OpKind,
            loc: crate::primitive::Loc,
            order: Ordering,
            f: impl Fn($t) -> $t,
        ) -> $t {
            let f = |v| super::Bits::to_bits(f(super::Bits::from_bits(v)));
            let old = self.perform((kind, loc), [order; 2], super::atomics::Act::Rmw(&f));
            super::Bits::from_bits(old.unwrap_or_else(|bits| bits))
        }

        /// A compare-and-exchange, as operation `kind` at `loc` (`weak`: it may fail
        /// spuriously).
        #[inline]
        fn exchange_at(
            &self,
            site: (crate::primitive::OpKind, crate::primitive::Loc),
            (current, new): ($t, $t),
            (success, failure): (Ordering, Ordering),
            weak: bool,
        ) -> Result<$t, $t> {
            let act = super::atomics::Act::Exchange {
                expected: super::Bits::to_bits(current),
                new: super::Bits::to_bits(new),
                weak,
            };
            self.perform(site, [success, failure], act)
                .map(super::Bits::from_bits)
                .map_err(super::Bits::from_bits)
        }

        /// Reads the value: any store the memory model lets this thread read (see
        /// [`crate::sync::atomic`]). A switch point.
        ///
        /// # Panics
        /// If `order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $t {
            super::check_load(&self.handle, "load", order);
            let kind = super::ops::LOAD;
            self.load_at(kind, std::panic::Location::caller(), order)
        }

        /// Writes `val`. A switch point.
        ///
        /// # Panics
        /// If `order` is `Acquire` or `AcqRel`, as std does.
        #[track_caller]
        pub fn store(&self, val: $t, order: Ordering) {
            super::check_store(&self.handle, "store", order);
            let site = (super::ops::STORE, std::panic::Location::caller());
            let act = super::atomics::Act::Store(super::Bits::to_bits(val));
            let _ = self.perform(site, [order; 2], act);
        }

        /// Writes `val` and returns the previous value. A switch point; every ordering is
        /// allowed.
        #[track_caller]
        pub fn swap(&self, val: $t, order: Ordering) -> $t {
            let kind = super::ops::SWAP;
            self.rmw_at(kind, std::panic::Location::caller(), order, |_| val)
        }

        /// Writes `new` if the value is `current`. `Ok(previous)` when it wrote,
        /// `Err(actual)` when it did not (a failure may read an older value than the newest,
        /// as std allows). A switch point.
        ///
        /// # Panics
        /// If `failure` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn compare_exchange(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            super::check_failure(&self.handle, "compare_exchange", failure);
            let op = (super::ops::COMPARE_EXCHANGE, std::panic::Location::caller());
            self.exchange_at(op, (current, new), (success, failure), false)
        }

        /// As [`compare_exchange`](Self::compare_exchange), but it may also fail where it
        /// could succeed, as std allows: whether it does is a decision the search explores
        /// (unless [`Builder::spurious_wakeups`](crate::Builder::spurious_wakeups) is off).
        /// A switch point.
        ///
        /// # Panics
        /// If `failure` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn compare_exchange_weak(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            super::check_failure(&self.handle, "compare_exchange_weak", failure);
            let op = (
                super::ops::COMPARE_EXCHANGE_WEAK,
                std::panic::Location::caller(),
            );
            self.exchange_at(op, (current, new), (success, failure), true)
        }

        /// Writes `new` if the value is `current`; returns the previous value either way. A
        /// switch point. Deprecated in std as here.
        #[deprecated(
            note = "deprecated in std since 1.50: use `compare_exchange` or `compare_exchange_weak`"
        )]
        #[track_caller]
        pub fn compare_and_swap(&self, current: $t, new: $t, order: Ordering) -> $t {
            let failure = super::cas_failure_order(order);
            match self.compare_exchange(current, new, order, failure) {
                Ok(v) | Err(v) => v,
            }
        }

        /// Replaces the value with `f(value)` until that succeeds or `f` returns `None`.
        /// `Ok(previous)` when it wrote, `Err(last seen)` when `f` declined. The load and each
        /// exchange are switch points, so `f` may be called more than once.
        ///
        /// # Panics
        /// If `fetch_order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn fetch_update<F>(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            f: F,
        ) -> Result<$t, $t>
        where
            F: FnMut($t) -> Option<$t>,
        {
            self.update_with(super::ops::FETCH_UPDATE, set_order, fetch_order, f)
        }

        /// The same as [`fetch_update`](Self::fetch_update), under std's newer name.
        ///
        /// # Panics
        /// If `fetch_order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn try_update(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            f: impl FnMut($t) -> Option<$t>,
        ) -> Result<$t, $t> {
            self.update_with(super::ops::TRY_UPDATE, set_order, fetch_order, f)
        }

        /// Replaces the value with `f(value)`, retrying until no other thread changed it in
        /// between; returns the previous value. The load and each exchange are switch points.
        ///
        /// # Panics
        /// If `fetch_order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn update(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            mut f: impl FnMut($t) -> $t,
        ) -> $t {
            match self.update_with(super::ops::UPDATE, set_order, fetch_order, |v| Some(f(v))) {
                Ok(v) | Err(v) => v,
            }
        }

        #[track_caller]
        fn update_with(
            &self,
            kinds: super::ops::Update,
            set_order: Ordering,
            fetch_order: Ordering,
            f: impl FnMut($t) -> Option<$t>,
        ) -> Result<$t, $t> {
            super::check_load(&self.handle, kinds.method, fetch_order);
            let loc = std::panic::Location::caller();
            super::update_loop(
                || self.load_at(kinds.load, loc, fetch_order),
                |current, new| {
                    let op = (kinds.exchange, loc);
                    self.exchange_at(op, (current, new), (set_order, fetch_order), true)
                },
                f,
            )
        }
    };
}
use common_methods;
