//! A cell of plain shared memory with loom's API in both builds: std's `UnsafeCell` behind a
//! zero-cost wrapper normally, interleave-test's race-checked cell under `--cfg interleave`.
//!
//! Go through [`UnsafeCell::with`] (a read) or [`UnsafeCell::with_mut`] (a write) for every
//! access, or hold a guard ([`UnsafeCell::get`], [`UnsafeCell::get_mut`]) for one that
//! spans several statements. Under the model, two accesses of different threads that
//! nothing orders, one of them a write, are a data race the search reports.

use std::marker::PhantomData;

#[cfg(interleave)]
use interleave_test::cell as imp;
#[cfg(not(interleave))]
use std::cell as imp;

/// Makes a type neither `Sync` nor `RefUnwindSafe`, as std's `UnsafeCell` is, while
/// keeping `Send` (a zero-sized field).
type NotSync = PhantomData<std::cell::UnsafeCell<()>>;

/// Makes a guard neither `Send` nor `Sync`, as the raw pointer it stands for is.
type NotSend = PhantomData<*const ()>;

/// Shared mutable memory whose accesses go through closures or guards (see the
/// [module](self)). `Send` when `T` is; never `Sync`, as std's.
#[repr(transparent)]
pub struct UnsafeCell<T: ?Sized> {
    not_sync: NotSync,
    inner: imp::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// A cell holding `data`.
    pub const fn new(data: T) -> Self {
        UnsafeCell {
            not_sync: PhantomData,
            inner: imp::UnsafeCell::new(data),
        }
    }

    /// Consumes the cell and returns its data.
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Reads the data through the pointer `f` receives (a read access under the model).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(interleave)]
        return self.inner.with(f);
        #[cfg(not(interleave))]
        return f(self.inner.get());
    }

    /// Writes (or reads) the data through the pointer `f` receives (a write access under
    /// the model).
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(interleave)]
        return self.inner.with_mut(f);
        #[cfg(not(interleave))]
        return f(self.inner.get());
    }

    /// A read access that lasts until the guard drops.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<'_, T> {
        ConstPtr {
            not_send: PhantomData,
            #[cfg(interleave)]
            inner: self.inner.get(),
            #[cfg(not(interleave))]
            inner: (self.inner.get(), PhantomData),
        }
    }

    /// A write access that lasts until the guard drops. Unlike std's `get_mut`, it takes
    /// `&self`, as loom's does.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<'_, T> {
        MutPtr {
            not_send: PhantomData,
            #[cfg(interleave)]
            inner: self.inner.get_mut(),
            #[cfg(not(interleave))]
            inner: (self.inner.get(), PhantomData),
        }
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
    not_send: NotSend,
    #[cfg(interleave)]
    inner: imp::ConstPtr<'a, T>,
    #[cfg(not(interleave))]
    inner: (*mut T, PhantomData<&'a T>),
}

impl<T: ?Sized> ConstPtr<'_, T> {
    /// Reads the data through the pointer `f` receives.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.as_ptr())
    }

    /// The raw pointer to the data, for your own `unsafe` code.
    pub fn as_ptr(&self) -> *const T {
        #[cfg(interleave)]
        return self.inner.as_ptr();
        #[cfg(not(interleave))]
        return self.inner.0;
    }
}

impl<T: ?Sized> std::fmt::Debug for ConstPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConstPtr { .. }")
    }
}

/// A write access to an [`UnsafeCell`] that lasts until it drops.
pub struct MutPtr<'a, T: ?Sized> {
    not_send: NotSend,
    #[cfg(interleave)]
    inner: imp::MutPtr<'a, T>,
    #[cfg(not(interleave))]
    inner: (*mut T, PhantomData<&'a T>),
}

impl<T: ?Sized> MutPtr<'_, T> {
    /// Writes (or reads) the data through the pointer `f` receives.
    pub fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.as_ptr())
    }

    /// The raw pointer to the data, for your own `unsafe` code.
    pub fn as_ptr(&self) -> *mut T {
        #[cfg(interleave)]
        return self.inner.as_ptr();
        #[cfg(not(interleave))]
        return self.inner.0;
    }
}

impl<T: ?Sized> std::fmt::Debug for MutPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MutPtr { .. }")
    }
}
