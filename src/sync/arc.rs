//! [`Arc`] and [`Weak`]: reference counting whose counts the model follows.
//!
//! The value lives in a `Box` inside std's `Arc`, next to the allocation's registration in
//! the execution. Dropping a reference publishes what its thread did (std's `fetch_sub` with
//! `Release`), and the last drop acquires every earlier one before the value's destructor
//! runs (std's `Acquire` fence), so a destructor that touches a `cell::UnsafeCell` the other
//! owners wrote is not a data race. An `Arc` created inside a model and still alive when the
//! execution has otherwise passed is a [`FailureKind::Leak`](crate::FailureKind::Leak),
//! unless a once-cell keeps it: see [`Arc`].
//!
//! # Differences from std
//! - The value is boxed (one allocation more), which is what lets an `Arc<dyn Trait>` be
//!   made without unsized coercion (unstable for types outside std): use
//!   `Arc::from(Box::new(value) as Box<dyn Trait>)`. `Arc<[T]>` comes from a `Vec<T>` or a
//!   `Box<[T]>`.
//! - Clones are not switch points (they commute with everything a model can observe). A
//!   drop while another reference exists (of a value with a destructor), `try_unwrap`,
//!   `into_inner` and `Weak::upgrade` of a live value are: which drop is the last one, and
//!   so runs the destructor, is a choice of the search.
//! - Missing: `new_cyclic`, `pin`, `new_uninit` and the other unstable or `unsafe` methods,
//!   and `Arc<str>` from `&str`.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::panic::Location;

use crate::primitive::arcs::{self, ArcReg};
use crate::primitive::{OpKind, Operation};

// The operations on a shared allocation. None has an access of its own: `runtime/arcs.rs`
// declares the counts each touches.

/// Dropping a strong reference that shares its allocation.
const DROP: OpKind = OpKind::new(&Operation::new("arc drop"));
/// `Arc::try_unwrap` or `Arc::into_inner` of a shared allocation.
const TRY_UNWRAP: OpKind = OpKind::new(&Operation::new("arc try_unwrap"));
/// Dropping a weak reference that shares its allocation.
const WEAK_DROP: OpKind = OpKind::new(&Operation::new("weak drop"));
/// `Weak::upgrade` of a live allocation.
const WEAK_UPGRADE: OpKind = OpKind::new(&Operation::new("weak upgrade"));

/// What the shared allocation holds.
struct Inner<T: ?Sized> {
    reg: Option<ArcReg>,
    /// It was cloned or downgraded (see [`shared`]). Only the running model thread touches
    /// it, and hand-offs order everything, so relaxed accesses suffice.
    shared: std::sync::atomic::AtomicBool,
    value: Box<T>,
}

/// A thread-safe reference-counting pointer, as [`std::sync::Arc`].
///
/// Dropping a reference publishes what its thread did, and the last drop acquires every
/// earlier one before the value's destructor runs (std's `Release` decrement and `Acquire`
/// fence), so a destructor that touches a [`cell::UnsafeCell`](crate::cell::UnsafeCell)
/// the other owners wrote is not a data race. An `Arc` created inside a model and still
/// alive when the execution has otherwise passed is a
/// [`FailureKind::Leak`](crate::FailureKind::Leak).
///
/// A [`LazyLock`](super::LazyLock), [`OnceLock`](super::OnceLock) or [`Once`](super::Once)
/// keeps the value made for it as long as it lives (a `static` one: for the process), and
/// the `Arc`s made for that value are not leaks: those its initializer creates (the
/// `LazyLock`'s function, the closure of `get_or_init` or `call_once`, `Arc`s inside the
/// value included), and those the calling thread creates just before `OnceLock::set` (since
/// its last switch point: `CELL.set(Arc::new(v))`). The cell holds the references they had
/// when it stored the value; more references left at the end are reported. A reference the
/// model stores in a static otherwise (a clone pushed into a static collection, or an `Arc`
/// made earlier and cloned into `set`) is reported, and the report says that a static may
/// hold it. A cell dropped during the execution keeps nothing, so what a local cell held is
/// checked like anything else.
///
/// # Differences from std
/// - The value is boxed, which is what lets an `Arc<dyn Trait>` be made without unsized
///   coercion (unstable for types outside std): use
///   `Arc::from(Box::new(value) as Box<dyn Trait>)`. `Arc<[T]>` comes from a `Vec<T>`.
/// - A drop is a switch point once the allocation was cloned or downgraded and the value
///   has a destructor (`std::mem::needs_drop`), and so are `try_unwrap` and `into_inner`,
///   and every [`Weak::upgrade`] and drop of a `Weak`: which thread's drop is the last one,
///   and so runs the value's destructor, is a choice of the search. The drop of a value
///   without one (an `Arc<Mutex<u32>>`) runs nothing another thread could see, and is no
///   switch point.
///   Reports show such a switch point at the line where the allocation was made (a drop
///   has no caller location). Clones are not switch points (they commute with everything
///   else: a thread that clones holds a reference, so no drop can be the last meanwhile).
/// - Missing: `new_cyclic`, `pin`, `new_uninit` and the other unstable or `unsafe` methods.
pub struct Arc<T: ?Sized> {
    /// Always `Some` but while the reference is taken apart (`try_unwrap`).
    inner: Option<std::sync::Arc<Inner<T>>>,
}

/// A reference that does not keep the value alive, as [`std::sync::Weak`].
pub struct Weak<T: ?Sized> {
    inner: std::sync::Weak<Inner<T>>,
    /// The allocation's registration (`None` for `Weak::new` and allocations made outside
    /// a model), kept here because a weak reference cannot read it without upgrading.
    reg: Option<ArcReg>,
}

/// Whether the allocation was ever cloned or downgraded: only then can another thread's
/// operation on it come before or after this one's.
///
/// A drop is a switch point only if, besides, the value has drop glue (`needs_drop`): a
/// switch point before a drop lets other threads act between what the dropping thread did
/// last and the drop, so that which drop is the last, and so runs the destructor, is a
/// choice. When the value has no destructor (an `Arc<Mutex<u32>>`, an `Arc` of atomics),
/// the last drop runs nothing another thread could see: the counts are read only by
/// operations (`strong_count`, `get_mut`, a failed `try_unwrap`, `Weak::upgrade`) that
/// conflict with every drop (`runtime/arcs.rs`), so the search orders their events against
/// the dropping thread's event, which holds the drop, both ways; and what the
/// memory model learns from the drop (its release, the last one's acquire) orders only what
/// the dropping thread does after it, whatever ran between its last switch point and the
/// drop. So such a drop needs no switch point of its own; a switch point there would only
/// add decisions (and, for PCT, dilute its change points among them). Like `shared`, it does
/// not depend on how far the other threads got. Not whether another reference exists
/// *now*, which depends on how far the other threads got: a switch point that exists in one
/// order of two drops and not in the other would make equivalent schedules differ in their
/// steps, and partial-order reduction miss some (a thread holding the only reference of an
/// allocation never shared is the only one that can make it shared).
fn shared<T: ?Sized>(inner: &std::sync::Arc<Inner<T>>) -> bool {
    inner.shared.load(std::sync::atomic::Ordering::Relaxed)
}

impl<T> Arc<T> {
    /// A new allocation holding `value`; inside a model it is followed for leaks.
    #[track_caller]
    pub fn new(value: T) -> Self {
        Arc::from_box(Box::new(value), Location::caller())
    }

    /// The value, if this is the only strong reference (the others' drops are acquired);
    /// `Err(self)` otherwise.
    pub fn try_unwrap(mut this: Self) -> Result<T, Self> {
        let inner = this.inner();
        let reg = inner.reg;
        if let Some(reg) = reg.filter(|_| shared(inner)) {
            arcs::switch_point(reg, TRY_UNWRAP);
        }
        if std::sync::Arc::strong_count(this.inner()) != 1 {
            if let Some(reg) = reg {
                arcs::observed(reg);
            }
            return Err(this);
        }
        let inner = this.inner.take().expect("present until taken apart");
        if let Some(reg) = reg {
            arcs::dropped(reg, true);
        }
        match std::sync::Arc::into_inner(inner) {
            Some(inner) => Ok(*inner.value),
            None => unreachable!("checked to be the only strong reference"),
        }
    }

    /// The value, if this is the only strong reference; `None` otherwise (the reference is
    /// dropped either way), as std's `Arc::into_inner`: of threads that each call it on
    /// their reference, exactly one gets the value.
    pub fn into_inner(mut this: Self) -> Option<T> {
        let inner = this.inner.take().expect("present until taken apart");
        if let Some(reg) = inner.reg {
            if shared(&inner) {
                arcs::switch_point(reg, TRY_UNWRAP);
            }
            arcs::dropped(reg, std::sync::Arc::strong_count(&inner) == 1);
        }
        std::sync::Arc::into_inner(inner).map(|inner| *inner.value)
    }
}

impl<T: ?Sized> Arc<T> {
    fn from_box(value: Box<T>, loc: &'static Location<'static>) -> Self {
        Arc {
            inner: Some(std::sync::Arc::new(Inner {
                reg: arcs::created(loc),
                shared: std::sync::atomic::AtomicBool::new(false),
                value,
            })),
        }
    }

    fn inner(&self) -> &std::sync::Arc<Inner<T>> {
        self.inner
            .as_ref()
            .expect("an Arc holds its allocation until it drops")
    }

    /// A new [`Weak`] reference to the allocation.
    pub fn downgrade(this: &Self) -> Weak<T> {
        let inner = this.inner();
        inner
            .shared
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Weak {
            inner: std::sync::Arc::downgrade(this.inner()),
            reg: this.inner().reg,
        }
    }

    /// Tells the runtime that the caller read what other references' drops change.
    fn observe(this: &Self) {
        if let Some(reg) = this.inner().reg {
            arcs::observed(reg);
        }
    }

    /// Strong references alive.
    pub fn strong_count(this: &Self) -> usize {
        Arc::observe(this);
        std::sync::Arc::strong_count(this.inner())
    }

    /// Weak references alive.
    pub fn weak_count(this: &Self) -> usize {
        Arc::observe(this);
        std::sync::Arc::weak_count(this.inner())
    }

    /// Whether both point to the same allocation.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(this.inner(), other.inner())
    }

    /// A mutable reference to the value, if no other strong or weak reference exists.
    pub fn get_mut(this: &mut Self) -> Option<&mut T> {
        Arc::observe(this);
        let inner = this.inner.as_mut().expect("present until taken apart");
        std::sync::Arc::get_mut(inner).map(|inner| &mut *inner.value)
    }

    /// A pointer to the value.
    pub fn as_ptr(this: &Self) -> *const T {
        &*this.inner().value
    }
}

impl<T: Clone> Arc<T> {
    /// A mutable reference to the value, cloning it into a new allocation first if other
    /// references exist, as std's `Arc::make_mut`.
    #[track_caller]
    pub fn make_mut(this: &mut Self) -> &mut T {
        if Arc::get_mut(this).is_none() {
            *this = Arc::new((**this).clone());
        }
        Arc::get_mut(this).expect("the only reference now")
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    /// Another strong reference to the same allocation.
    fn clone(&self) -> Self {
        let inner = self.inner();
        inner
            .shared
            .store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(reg) = inner.reg {
            arcs::cloned(reg);
        }
        Arc {
            inner: Some(std::sync::Arc::clone(self.inner())),
        }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    /// Drops this reference: it publishes what its thread did; the last one acquires every
    /// earlier drop before the value's destructor runs.
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        if let Some(reg) = inner.reg {
            if shared(&inner) && std::mem::needs_drop::<T>() {
                arcs::switch_point(reg, DROP);
            }
            arcs::dropped(reg, std::sync::Arc::strong_count(&inner) == 1);
        }
        drop(inner);
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner().value
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ?Sized> Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        self
    }
}

impl<T: Default> Default for Arc<T> {
    /// An `Arc` holding `T::default()`.
    #[track_caller]
    fn default() -> Self {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    /// An `Arc` holding `value`.
    #[track_caller]
    fn from(value: T) -> Self {
        Arc::new(value)
    }
}

impl<T: ?Sized> From<Box<T>> for Arc<T> {
    /// An `Arc` holding the boxed value, unsized ones (`dyn Trait`, slices) included.
    #[track_caller]
    fn from(value: Box<T>) -> Self {
        Arc::from_box(value, Location::caller())
    }
}

impl<T> From<Vec<T>> for Arc<[T]> {
    /// An `Arc` holding the vector's elements as a slice.
    #[track_caller]
    fn from(value: Vec<T>) -> Self {
        Arc::from_box(value.into_boxed_slice(), Location::caller())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for Arc<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: ?Sized + Eq> Eq for Arc<T> {}

impl<T: ?Sized + PartialOrd> PartialOrd for Arc<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: ?Sized + Ord> Ord for Arc<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl<T: ?Sized + Hash> Hash for Arc<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<T> Weak<T> {
    /// A reference to nothing: `upgrade` always returns `None`.
    pub fn new() -> Self {
        Weak {
            inner: std::sync::Weak::new(),
            reg: None,
        }
    }
}

impl<T: ?Sized> Weak<T> {
    /// A strong reference, if the value is still alive.
    pub fn upgrade(&self) -> Option<Arc<T>> {
        let Some(reg) = self.reg else {
            return self.inner.upgrade().map(|inner| Arc { inner: Some(inner) });
        };
        arcs::switch_point(reg, WEAK_UPGRADE);
        let Some(inner) = self.inner.upgrade() else {
            arcs::observed(reg);
            return None;
        };
        arcs::upgraded(reg);
        Some(Arc { inner: Some(inner) })
    }

    /// Strong references alive.
    pub fn strong_count(&self) -> usize {
        if let Some(reg) = self.reg {
            arcs::observed(reg);
        }
        self.inner.strong_count()
    }

    /// Weak references alive (0 once no strong reference is left).
    pub fn weak_count(&self) -> usize {
        if let Some(reg) = self.reg {
            arcs::observed(reg);
        }
        self.inner.weak_count()
    }

    /// Whether both point to the same allocation (or both to none).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.inner.ptr_eq(&other.inner)
    }
}

impl<T: ?Sized> Clone for Weak<T> {
    fn clone(&self) -> Self {
        Weak {
            inner: self.inner.clone(),
            reg: self.reg,
        }
    }
}

impl<T: ?Sized> Drop for Weak<T> {
    /// Drops this weak reference: a switch point (the weak count is what `get_mut` and
    /// `weak_count` read).
    fn drop(&mut self) {
        if let Some(reg) = self.reg {
            arcs::switch_point(reg, WEAK_DROP);
            arcs::weak_dropped(reg);
        }
    }
}

impl<T> Default for Weak<T> {
    /// Same as [`Weak::new`].
    fn default() -> Self {
        Weak::new()
    }
}

impl<T: ?Sized> fmt::Debug for Weak<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(Weak)")
    }
}
