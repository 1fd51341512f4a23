//! [`AtomicPtr`]: a raw pointer shared between threads.

use std::fmt;

use super::{Ordering, common_methods};
use crate::primitive::ObjectHandle;

/// A raw pointer shared between threads, as [`std::sync::atomic::AtomicPtr`].
///
/// # Differences from std
/// Every operation is a switch point, and a load may read an older pointer as the memory
/// model allows (pointers are kept as addresses with exposed provenance); see
/// [`crate::sync::atomic`] for the full list. The pointer arithmetic
/// methods (`fetch_ptr_add`, `fetch_or`, ...) are available on this crate's minimum Rust
/// version too.
pub struct AtomicPtr<T> {
    handle: ObjectHandle,
    inner: std::sync::atomic::AtomicPtr<T>,
    /// The pointer it was created with, to which a `static` is reset (in an atomic so that
    /// the type stays `Send` and `Sync`; never changed).
    init: std::sync::atomic::AtomicPtr<T>,
}

impl<T> AtomicPtr<T> {
    /// A new atomic holding `p`.
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr {
            handle: ObjectHandle::restorable("AtomicPtr"),
            inner: std::sync::atomic::AtomicPtr::new(p),
            init: std::sync::atomic::AtomicPtr::new(p),
        }
    }

    /// A mutable reference to the pointer. Not a switch point: `&mut self` proves no other
    /// thread can reach the atomic.
    pub fn get_mut(&mut self) -> &mut *mut T {
        self.take_back();
        self.inner.get_mut()
    }

    /// Consumes the atomic and returns its pointer. Not a switch point (nor, unlike std's,
    /// a `const fn`: inside a model, the running execution holds the value).
    pub fn into_inner(self) -> *mut T {
        self.value()
    }

    /// The pointer it was created with.
    fn init_value(&self) -> *mut T {
        self.init.load(super::RUN)
    }

    common_methods!(*mut T);

    /// Moves the pointer forward by `val` elements of `T` (wrapping); returns the previous
    /// pointer. A switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_ptr_add(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_PTR_ADD, order, |p| p.wrapping_add(val))
    }

    /// Moves the pointer back by `val` elements of `T` (wrapping); returns the previous
    /// pointer. A switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_ptr_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_PTR_SUB, order, |p| p.wrapping_sub(val))
    }

    /// Moves the pointer forward by `val` bytes (wrapping); returns the previous pointer. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_byte_add(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_BYTE_ADD, order, |p| {
            p.wrapping_byte_add(val)
        })
    }

    /// Moves the pointer back by `val` bytes (wrapping); returns the previous pointer. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_byte_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_BYTE_SUB, order, |p| {
            p.wrapping_byte_sub(val)
        })
    }

    /// Sets the pointer's address to its bitwise OR with `val`, keeping its provenance;
    /// returns the previous pointer. A switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_or(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_OR, order, |p| p.map_addr(|a| a | val))
    }

    /// Sets the pointer's address to its bitwise AND with `val`, keeping its provenance;
    /// returns the previous pointer. A switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_and(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_AND, order, |p| p.map_addr(|a| a & val))
    }

    /// Sets the pointer's address to its bitwise XOR with `val`, keeping its provenance;
    /// returns the previous pointer. A switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_xor(&self, val: usize, order: Ordering) -> *mut T {
        self.modify(super::ops::FETCH_XOR, order, |p| p.map_addr(|a| a ^ val))
    }

    /// One switch point, then replaces the pointer with `f(pointer)`.
    #[track_caller]
    fn modify(
        &self,
        kind: crate::primitive::OpKind,
        order: Ordering,
        f: impl Fn(*mut T) -> *mut T,
    ) -> *mut T {
        self.rmw_at(kind, std::panic::Location::caller(), order, f)
    }
}

impl<T> Default for AtomicPtr<T> {
    /// An atomic holding a null pointer.
    fn default() -> Self {
        AtomicPtr::new(std::ptr::null_mut())
    }
}

impl<T> From<*mut T> for AtomicPtr<T> {
    /// Converts a pointer into an atomic holding it.
    fn from(p: *mut T) -> Self {
        AtomicPtr::new(p)
    }
}

impl<T> fmt::Debug for AtomicPtr<T> {
    /// Formats the pointer, read without a switch point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value(), f)
    }
}

impl<T> fmt::Pointer for AtomicPtr<T> {
    /// Formats the pointer's address, read without a switch point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.value(), f)
    }
}
