//! Plain (non-atomic) shared memory whose accesses are checked for data races, with the API
//! of loom's `cell` module.
//!
//! Wrap the data that threads share through your own synchronization in
//! [`UnsafeCell`] instead of `std::cell::UnsafeCell`, and go through [`UnsafeCell::with`]
//! (a read) or [`UnsafeCell::with_mut`] (a write) for every access. Two accesses to one
//! cell from different threads, at least one of them a write, that nothing orders (no
//! lock, `join`, channel, or `Acquire` load of a `Release` store between them) are a
//! [`FailureKind::DataRace`](crate::FailureKind::DataRace) under every strategy, reported
//! with both accesses.
//!
//! ```
//! use interleave_test::cell::UnsafeCell;
//! use interleave_test::sync::Arc;
//! use interleave_test::sync::Mutex;
//! use interleave_test::{Builder, FailureKind, thread};
//!
//! struct Shared {
//!     lock: Mutex<()>,
//!     value: UnsafeCell<u32>,
//! }
//!
//! let failure = Builder::new().check(|| {
//!     let s = Arc::new(Shared { lock: Mutex::new(()), value: UnsafeCell::new(0) });
//!     let s2 = Arc::clone(&s);
//!     let t = thread::spawn(move || {
//!         let _guard = s2.lock.lock().unwrap();
//!         s2.value.with_mut(|p| unsafe { *p += 1 });
//!     });
//!     // Forgot the lock here:
//!     s.value.with_mut(|p| unsafe { *p += 1 });
//!     t.join().unwrap();
//! }).unwrap_err();
//! assert_eq!(failure.kind(), FailureKind::DataRace);
//! ```
//!
//! # Differences from loom
//! - The crate has no `unsafe` code, so the guards [`ConstPtr`] and [`MutPtr`] have no
//!   `deref`: use their `with`, or their raw pointer (`as_ptr`) in your own `unsafe` block.
//! - [`UnsafeCell`] is `Sync` when `T` is `Send` (loom's is never `Sync`).
//! - Outside a model a cell works as a plain `UnsafeCell`, unchecked.
//! - An access is checked when it starts and, for a guard, again when the guard drops, so
//!   an access that spans a synchronization is checked at both ends.

use std::panic::Location;

use crate::primitive::{Fresh, ObjectHandle, atomics::cell_access};

/// A cell of plain memory shared between threads, whose accesses are checked for data races
/// (see the [module](self)).
///
/// Unlike `std::cell::UnsafeCell` it is `Sync` when `T` is `Send`, so a model can share it
/// without an `unsafe impl Sync` of its own; reading or writing through its pointers still
/// takes `unsafe` code, whose races this type reports.
pub struct UnsafeCell<T: ?Sized> {
    handle: ObjectHandle,
    /// The data. Never locked: the mutex is only a `Sync` home that hands out a raw
    /// pointer without `unsafe` code.
    data: parking_lot::Mutex<T>,
}

impl<T> UnsafeCell<T> {
    /// A cell holding `data`.
    pub const fn new(data: T) -> Self {
        UnsafeCell {
            handle: ObjectHandle::new("UnsafeCell").fresh(Some(Fresh {
                ty: "UnsafeCell<T>",
                or: "",
            })),
            data: parking_lot::Mutex::new(data),
        }
    }

    /// Consumes the cell and returns its data. Not checked: owning the cell proves no other
    /// thread can reach it.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Reads the data through the pointer `f` receives: a read access, checked for races
    /// with the writes of other threads.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        cell_access(&self.handle, false, Location::caller());
        f(self.data.data_ptr())
    }

    /// Writes the data through the pointer `f` receives: a write access, checked for races
    /// with every access of other threads.
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        cell_access(&self.handle, true, Location::caller());
        f(self.data.data_ptr())
    }

    /// A read access that lasts until the guard drops (checked when it starts and when it
    /// ends).
    #[track_caller]
    pub fn get(&self) -> ConstPtr<'_, T> {
        let loc = Location::caller();
        cell_access(&self.handle, false, loc);
        ConstPtr { cell: self, loc }
    }

    /// A write access that lasts until the guard drops (checked when it starts and when it
    /// ends).
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<'_, T> {
        let loc = Location::caller();
        cell_access(&self.handle, true, loc);
        MutPtr { cell: self, loc }
    }
}

impl<T: Default> Default for UnsafeCell<T> {
    /// A cell holding `T::default()`.
    fn default() -> Self {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    /// A cell holding `data`.
    fn from(data: T) -> Self {
        UnsafeCell::new(data)
    }
}

impl<T: ?Sized> std::fmt::Debug for UnsafeCell<T> {
    /// Says what it is, without reading the data (that would be an access).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UnsafeCell { .. }")
    }
}

/// A read access to an [`UnsafeCell`] that lasts until it drops.
pub struct ConstPtr<'a, T: ?Sized> {
    cell: &'a UnsafeCell<T>,
    loc: &'static Location<'static>,
}

impl<T: ?Sized> ConstPtr<'_, T> {
    /// Reads the data through the pointer `f` receives.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.cell.data.data_ptr())
    }

    /// The raw pointer to the data, for your own `unsafe` code.
    pub fn as_ptr(&self) -> *const T {
        self.cell.data.data_ptr()
    }
}

impl<T: ?Sized> std::fmt::Debug for ConstPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ConstPtr({})", self.loc)
    }
}

impl<T: ?Sized> Drop for ConstPtr<'_, T> {
    fn drop(&mut self) {
        cell_access(&self.cell.handle, false, self.loc);
    }
}

/// A write access to an [`UnsafeCell`] that lasts until it drops.
pub struct MutPtr<'a, T: ?Sized> {
    cell: &'a UnsafeCell<T>,
    loc: &'static Location<'static>,
}

impl<T: ?Sized> MutPtr<'_, T> {
    /// Writes (or reads) the data through the pointer `f` receives.
    pub fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.cell.data.data_ptr())
    }

    /// The raw pointer to the data, for your own `unsafe` code.
    pub fn as_ptr(&self) -> *mut T {
        self.cell.data.data_ptr()
    }
}

impl<T: ?Sized> std::fmt::Debug for MutPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MutPtr({})", self.loc)
    }
}

impl<T: ?Sized> Drop for MutPtr<'_, T> {
    fn drop(&mut self) {
        cell_access(&self.cell.handle, true, self.loc);
    }
}
