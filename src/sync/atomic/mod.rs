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
//! - Operations on a shared atomic panic outside a model. `new`, `get_mut`, `into_inner`,
//!   `Default` and `From` work anywhere and are not switch points; nor is `Debug`, which
//!   reads the value directly.
//! - [`compiler_fence`] is not a switch point (it orders nothing between threads); it only
//!   validates its ordering and works anywhere. [`fence`] is a switch point.
//! - The types are larger than std's (each carries its registration in the execution) and
//!   have no `as_ptr`, `from_ptr` or other `unsafe` or unstable methods.

mod atomic_bool;
mod atomic_ptr;
mod int;

use std::panic::Location;

pub use std::sync::atomic::Ordering;

pub use atomic_bool::AtomicBool;
pub use atomic_ptr::AtomicPtr;
pub use int::{
    AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU8, AtomicU16, AtomicU32,
    AtomicU64, AtomicUsize,
};

use crate::runtime::atomics as memory;
use crate::runtime::{self, ObjId, ObjectHandle};

/// The ordering the value itself is read and written with. Only the one model thread that
/// runs ever touches it, and hand-offs order everything (the coroutines of an execution share
/// one OS thread; OS threads pass a release/acquire baton), so plain relaxed loads and stores
/// suffice: a read-modify-write is a load then a store, never a locked instruction, which
/// would cost more than the switch point itself.
const RUN: Ordering = Ordering::Relaxed;

/// A memory fence, as [`std::sync::atomic::fence`]: a `Release` fence makes the relaxed
/// stores after it publish what came before it, an `Acquire` fence makes what the relaxed
/// loads before it read acquired, and a `SeqCst` fence also takes part in the single order
/// of `SeqCst` operations. A switch point.
///
/// # Panics
/// If `order` is `Relaxed`, as std does, and outside a model.
#[track_caller]
pub fn fence(order: Ordering) {
    if order == Ordering::Relaxed {
        panic!(
            "interleave_test::sync::atomic::fence: there is no such thing as a relaxed fence \
             (std panics here too); use Acquire, Release, AcqRel or SeqCst"
        );
    }
    enter(None, crate::runtime::OpKind::Fence);
    memory::fence(order);
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

/// The switch point before operation `kind` on the atomic `handle` (or a fence when `None`);
/// returns the atomic's id in the execution. Outside a model it panics naming the API.
#[track_caller]
fn enter(handle: Option<&ObjectHandle>, kind: crate::runtime::OpKind) -> ObjId {
    match runtime::switch_point_in_model(kind, handle, Location::caller()) {
        Some(obj) => obj.unwrap_or(usize::MAX),
        None => outside_model(handle, kind),
    }
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

/// Panics with the runtime's explanation of use outside a model, naming the method: `kind`
/// is "atomic METHOD" or "atomic METHOD (step)".
#[cold]
#[track_caller]
fn outside_model(handle: Option<&ObjectHandle>, kind: crate::runtime::OpKind) -> ! {
    let kind = kind.name();
    let method = kind.strip_prefix("atomic ").unwrap_or(kind);
    let method = method.split(' ').next().unwrap_or(method);
    let api = match handle {
        Some(h) => format!("interleave_test::sync::atomic::{}::{method}", h.kind()),
        None => format!("interleave_test::sync::atomic::{method}"),
    };
    runtime::with_state(&api, |_| ());
    unreachable!("with_state panics outside a model")
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

/// Tells the runtime that the operation just performed changed nothing, if `same` (a write
/// of the value the atomic held, a failed compare-and-exchange): see `runtime/spins.rs`.
fn unchanged_if(same: bool) {
    if same {
        runtime::unchanged();
    }
}

/// Whether a compare-and-exchange wrote a value other than the one it found.
fn exchanged<T: Bits + Copy>(result: &Result<T, T>, new: u64) -> bool {
    matches!(result, Ok(old) if old.to_bits() != new)
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
/// `handle: ObjectHandle` and `inner` (the std atomic holding the value).
macro_rules! common_methods {
    ($t:ty) => {
        /// The newest value as this atomic knows it, and its initial one.
        fn held(&self) -> super::memory::Held {
            super::memory::Held {
                now: super::Bits::to_bits(self.inner.load(super::RUN)),
                init: super::Bits::to_bits(self.init_value()),
            }
        }

        /// Keeps the newest value after an operation, if the runtime gives it.
        fn keep(&self, bits: Option<u64>) {
            if let Some(bits) = bits {
                self.inner.store(super::Bits::from_bits(bits), super::RUN);
            }
        }

        /// A load with `order`, as operation `kind` at `loc` (its switch point included).
        fn load_at(
            &self,
            kind: crate::runtime::OpKind,
            loc: crate::runtime::Loc,
            order: Ordering,
        ) -> $t {
            let op = (kind, &self.handle, loc);
            if order == Ordering::SeqCst {
                if let Some(v) = super::memory::direct(op, || self.inner.load(super::RUN)) {
                    return v;
                }
            }
            let (v, newest) = super::memory::load(op, || self.held(), order)
                .unwrap_or_else(|| super::outside_model(Some(&self.handle), kind));
            self.keep(newest);
            super::Bits::from_bits(v)
        }

        /// A read-modify-write that always writes `f(old)`, as operation `kind` at `loc`.
        fn rmw_at(
            &self,
            kind: crate::runtime::OpKind,
            loc: crate::runtime::Loc,
            order: Ordering,
            f: impl FnOnce($t) -> $t,
        ) -> $t {
            let op = (kind, &self.handle, loc);
            // A write of the value the atomic held changes nothing (`runtime/spins.rs`).
            let same = std::cell::Cell::new(false);
            let f = |old: $t| {
                let new = f(old);
                same.set(super::Bits::to_bits(new) == super::Bits::to_bits(old));
                new
            };
            let mut f = Some(f);
            if order == Ordering::SeqCst {
                let direct = || {
                    let old = self.inner.load(super::RUN);
                    let f = f.take().expect("unused until here");
                    self.inner.store(f(old), super::RUN);
                    old
                };
                if let Some(old) = super::memory::direct(op, direct) {
                    super::unchanged_if(same.get());
                    return old;
                }
            }
            let f = f.expect("the direct way did not run");
            let (old, newest) = super::memory::rmw(
                op,
                || self.held(),
                order,
                |v| super::Bits::to_bits(f(super::Bits::from_bits(v))),
            )
            .unwrap_or_else(|| super::outside_model(Some(&self.handle), kind));
            self.keep(newest);
            super::unchanged_if(same.get());
            super::Bits::from_bits(old)
        }

        /// A compare-and-exchange, as operation `kind` at `loc` (`weak`: it may fail
        /// spuriously).
        fn exchange_at(
            &self,
            (kind, loc): (crate::runtime::OpKind, crate::runtime::Loc),
            (current, new): ($t, $t),
            orders: (Ordering, Ordering),
            weak: bool,
        ) -> Result<$t, $t> {
            let values = (super::Bits::to_bits(current), super::Bits::to_bits(new));
            let op = (kind, &self.handle, loc);
            // A weak one may fail spuriously: a decision, taken in the memory model's way.
            if !weak && orders == (Ordering::SeqCst, Ordering::SeqCst) {
                let direct = || {
                    let now = self.inner.load(super::RUN);
                    if super::Bits::to_bits(now) != values.0 {
                        return Err(now);
                    }
                    self.inner.store(new, super::RUN);
                    Ok(now)
                };
                if let Some(result) = super::memory::direct(op, direct) {
                    super::unchanged_if(!super::exchanged(&result, values.1));
                    return result;
                }
            }
            let (result, newest) =
                super::memory::compare_exchange(op, || self.held(), values, orders, weak)
                    .unwrap_or_else(|| super::outside_model(Some(&self.handle), kind));
            self.keep(newest);
            let result = result
                .map(super::Bits::from_bits)
                .map_err(super::Bits::from_bits);
            super::unchanged_if(!super::exchanged(&result, values.1));
            result
        }

        /// Reads the value: any store the memory model lets this thread read (see
        /// [`crate::sync::atomic`]). A switch point.
        ///
        /// # Panics
        /// If `order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $t {
            super::check_load(&self.handle, "load", order);
            let kind = crate::runtime::OpKind::AtomicLoad;
            self.load_at(kind, std::panic::Location::caller(), order)
        }

        /// Writes `val`. A switch point.
        ///
        /// # Panics
        /// If `order` is `Acquire` or `AcqRel`, as std does.
        #[track_caller]
        pub fn store(&self, val: $t, order: Ordering) {
            super::check_store(&self.handle, "store", order);
            let kind = crate::runtime::OpKind::AtomicStore;
            let op = (kind, &self.handle, std::panic::Location::caller());
            let same =
                super::Bits::to_bits(self.inner.load(super::RUN)) == super::Bits::to_bits(val);
            if order == Ordering::SeqCst
                && super::memory::direct(op, || self.inner.store(val, super::RUN)).is_some()
            {
                super::unchanged_if(same);
                return;
            }
            let newest = super::memory::store(op, || self.held(), super::Bits::to_bits(val), order)
                .unwrap_or_else(|| super::outside_model(Some(&self.handle), kind));
            self.keep(newest);
            super::unchanged_if(same);
        }

        /// Writes `val` and returns the previous value. A switch point; every ordering is
        /// allowed.
        #[track_caller]
        pub fn swap(&self, val: $t, order: Ordering) -> $t {
            let kind = crate::runtime::OpKind::AtomicSwap;
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
            let op = (
                crate::runtime::OpKind::AtomicCompareExchange,
                std::panic::Location::caller(),
            );
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
                crate::runtime::OpKind::AtomicCompareExchangeWeak,
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
            self.update_with(
                crate::op::UpdateMethod::FetchUpdate,
                set_order,
                fetch_order,
                f,
            )
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
            self.update_with(
                crate::op::UpdateMethod::TryUpdate,
                set_order,
                fetch_order,
                f,
            )
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
            match self.update_with(
                crate::op::UpdateMethod::Update,
                set_order,
                fetch_order,
                |v| Some(f(v)),
            ) {
                Ok(v) | Err(v) => v,
            }
        }

        #[track_caller]
        fn update_with(
            &self,
            kinds: crate::op::UpdateMethod,
            set_order: Ordering,
            fetch_order: Ordering,
            f: impl FnMut($t) -> Option<$t>,
        ) -> Result<$t, $t> {
            super::check_load(&self.handle, kinds.method(), fetch_order);
            let loc = std::panic::Location::caller();
            super::update_loop(
                || {
                    self.load_at(
                        crate::runtime::OpKind::AtomicUpdateLoad(kinds),
                        loc,
                        fetch_order,
                    )
                },
                |current, new| {
                    let op = (crate::runtime::OpKind::AtomicUpdateExchange(kinds), loc);
                    self.exchange_at(op, (current, new), (set_order, fetch_order), true)
                },
                f,
            )
        }
    };
}
use common_methods;
