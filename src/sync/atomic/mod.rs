//! Modelled atomics, with the names, paths and signatures of [`std::sync::atomic`].
//!
//! Every operation on a shared atomic is a switch point: the explorer may run another thread
//! just before the load, store or read-modify-write takes effect, so a check-then-act race
//! such as `let v = x.load(SeqCst); x.store(v + 1, SeqCst)` is found.
//!
//! # Differences from std
//! - **Memory model.** Every operation acts as `SeqCst`, whatever [`Ordering`] the caller
//!   passes: all threads see one total order of atomic operations. Bugs that only weaker
//!   orderings allow (a `Relaxed` store seen late by another thread, a missing
//!   `Acquire`/`Release` pair) are not found yet. Orderings are still validated as std
//!   validates them: `load(Release)`, `store(Acquire)`, a `Release` or `AcqRel` failure
//!   ordering and `fence(Relaxed)` panic at the caller's line, as they do in std.
//! - `compare_exchange_weak` never fails spuriously: it behaves as `compare_exchange`, so
//!   that every execution is reproducible.
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

use crate::runtime::{self, ObjectHandle};

/// The ordering the value itself is read and written with. Only the one model thread that
/// runs ever touches it, and hand-offs order everything (the coroutines of an execution share
/// one OS thread; OS threads pass a release/acquire baton), so plain relaxed loads and stores
/// suffice: a read-modify-write is a load then a store, never a locked instruction, which
/// would cost more than the switch point itself.
const RUN: Ordering = Ordering::Relaxed;

/// A memory fence, as [`std::sync::atomic::fence`]. A switch point; with every operation
/// sequentially consistent it orders nothing more (see the module's differences from std).
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

/// The switch point before operation `kind` on the atomic `handle` (or a fence when `None`).
/// Outside a model it panics naming the API.
#[track_caller]
fn enter(handle: Option<&ObjectHandle>, kind: crate::runtime::OpKind) {
    if runtime::switch_point_in_model(kind, handle, Location::caller()).is_none() {
        outside_model(handle, kind);
    }
}

/// Panics with the runtime's explanation of use outside a model, naming the method: `kind`
/// is "atomic METHOD" or "atomic METHOD (step)".
#[cold]
#[track_caller]
fn outside_model(handle: Option<&ObjectHandle>, kind: crate::runtime::OpKind) {
    let kind = kind.name();
    let method = kind.strip_prefix("atomic ").unwrap_or(kind);
    let method = method.split(' ').next().unwrap_or(method);
    let api = match handle {
        Some(h) => format!("interleave_test::sync::atomic::{}::{method}", h.kind()),
        None => format!("interleave_test::sync::atomic::{method}"),
    };
    runtime::with_state(&api, |_| ());
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

/// The switch points of one update method: before its load and before each exchange.
#[derive(Clone, Copy)]
struct UpdateKinds {
    method: &'static str,
    load: crate::runtime::OpKind,
    exchange: crate::runtime::OpKind,
}

const FETCH_UPDATE: UpdateKinds = UpdateKinds {
    method: "fetch_update",
    load: crate::runtime::OpKind::AtomicUpdateLoad("atomic fetch_update (load)"),
    exchange: crate::runtime::OpKind::AtomicUpdateExchange(
        "atomic fetch_update (compare_exchange)",
    ),
};
const TRY_UPDATE: UpdateKinds = UpdateKinds {
    method: "try_update",
    load: crate::runtime::OpKind::AtomicUpdateLoad("atomic try_update (load)"),
    exchange: crate::runtime::OpKind::AtomicUpdateExchange("atomic try_update (compare_exchange)"),
};
const UPDATE: UpdateKinds = UpdateKinds {
    method: "update",
    load: crate::runtime::OpKind::AtomicUpdateLoad("atomic update (load)"),
    exchange: crate::runtime::OpKind::AtomicUpdateExchange("atomic update (compare_exchange)"),
};

/// The loop behind `fetch_update`, `try_update` and `update`: load, then offer `f`'s new
/// value with a compare-and-exchange until it succeeds or `f` declines (`None`). `load` and
/// `exchange` act on the real value; each is preceded by a switch point.
#[track_caller]
fn update_loop<T: Copy>(
    handle: &ObjectHandle,
    kinds: UpdateKinds,
    fetch_order: Ordering,
    load: impl Fn() -> T,
    exchange: impl Fn(T, T) -> Result<T, T>,
    mut f: impl FnMut(T) -> Option<T>,
) -> Result<T, T> {
    check_load(handle, kinds.method, fetch_order);
    enter(Some(handle), kinds.load);
    let mut prev = load();
    while let Some(next) = f(prev) {
        enter(Some(handle), kinds.exchange);
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
        /// Reads the value. A switch point.
        ///
        /// # Panics
        /// If `order` is `Release` or `AcqRel`, as std does.
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $t {
            super::check_load(&self.handle, "load", order);
            super::enter(Some(&self.handle), crate::runtime::OpKind::AtomicLoad);
            self.inner.load(super::RUN)
        }

        /// Writes `val`. A switch point.
        ///
        /// # Panics
        /// If `order` is `Acquire` or `AcqRel`, as std does.
        #[track_caller]
        pub fn store(&self, val: $t, order: Ordering) {
            super::check_store(&self.handle, "store", order);
            super::enter(Some(&self.handle), crate::runtime::OpKind::AtomicStore);
            self.inner.store(val, super::RUN);
        }

        /// Writes `val` and returns the previous value. A switch point; every ordering is
        /// allowed.
        #[track_caller]
        pub fn swap(&self, val: $t, order: Ordering) -> $t {
            let _ = order;
            super::enter(Some(&self.handle), crate::runtime::OpKind::AtomicSwap);
            let old = self.inner.load(super::RUN);
            self.inner.store(val, super::RUN);
            old
        }

        /// Writes `new` if the value is `current`. `Ok(previous)` when it wrote,
        /// `Err(actual)` when it did not. A switch point.
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
            let _ = success;
            super::check_failure(&self.handle, "compare_exchange", failure);
            super::enter(
                Some(&self.handle),
                crate::runtime::OpKind::AtomicCompareExchange,
            );
            self.exchange(current, new)
        }

        /// As [`compare_exchange`](Self::compare_exchange); never fails spuriously here (std
        /// may, on some targets). A switch point.
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
            let _ = success;
            super::check_failure(&self.handle, "compare_exchange_weak", failure);
            super::enter(
                Some(&self.handle),
                crate::runtime::OpKind::AtomicCompareExchangeWeak,
            );
            self.exchange(current, new)
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
            let _ = set_order;
            self.update_with(super::FETCH_UPDATE, fetch_order, f)
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
            let _ = set_order;
            self.update_with(super::TRY_UPDATE, fetch_order, f)
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
            let _ = set_order;
            match self.update_with(super::UPDATE, fetch_order, |v| Some(f(v))) {
                Ok(v) | Err(v) => v,
            }
        }

        #[track_caller]
        fn update_with(
            &self,
            kinds: super::UpdateKinds,
            fetch_order: Ordering,
            f: impl FnMut($t) -> Option<$t>,
        ) -> Result<$t, $t> {
            super::update_loop(
                &self.handle,
                kinds,
                fetch_order,
                || self.inner.load(super::RUN),
                |current, new| self.exchange(current, new),
                f,
            )
        }

        /// The compare-exchange itself, after its switch point (see `RUN`).
        fn exchange(&self, current: $t, new: $t) -> Result<$t, $t> {
            let v = self.inner.load(super::RUN);
            if v != current {
                return Err(v);
            }
            self.inner.store(new, super::RUN);
            Ok(v)
        }
    };
}
use common_methods;
