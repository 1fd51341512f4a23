//! [`AtomicBool`]: a boolean shared between threads.

use std::fmt;

use super::{Ordering, common_methods};
use crate::primitive::ObjectHandle;

/// A boolean shared between threads, as [`std::sync::atomic::AtomicBool`].
///
/// # Differences from std
/// Every operation is a switch point, and a load may read an older value as the memory model
/// allows; see [`crate::sync::atomic`] for the full list.
pub struct AtomicBool {
    handle: ObjectHandle,
    inner: std::sync::atomic::AtomicBool,
    /// The value it was created with, to which a `static` is reset.
    init: bool,
}

impl AtomicBool {
    /// A new atomic holding `v`.
    pub const fn new(v: bool) -> Self {
        AtomicBool {
            handle: ObjectHandle::restorable("AtomicBool"),
            inner: std::sync::atomic::AtomicBool::new(v),
            init: v,
        }
    }

    /// A mutable reference to the value. Not a switch point: `&mut self` proves no other
    /// thread can reach the atomic.
    pub fn get_mut(&mut self) -> &mut bool {
        self.take_back();
        self.inner.get_mut()
    }

    /// Consumes the atomic and returns its value. Not a switch point (nor, unlike std's, a
    /// `const fn`: inside a model, the running execution holds the value).
    pub fn into_inner(self) -> bool {
        self.value()
    }

    /// The value it was created with.
    fn init_value(&self) -> bool {
        self.init
    }

    common_methods!(bool);

    /// Replaces the value with its logical AND with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_and(&self, val: bool, order: Ordering) -> bool {
        let kind = super::ops::FETCH_AND;
        self.rmw_at(kind, std::panic::Location::caller(), order, |old| old & val)
    }

    /// Replaces the value with the NOT of its AND with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_nand(&self, val: bool, order: Ordering) -> bool {
        let kind = super::ops::FETCH_NAND;
        self.rmw_at(kind, std::panic::Location::caller(), order, |old| {
            !(old & val)
        })
    }

    /// Replaces the value with its logical OR with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_or(&self, val: bool, order: Ordering) -> bool {
        let kind = super::ops::FETCH_OR;
        self.rmw_at(kind, std::panic::Location::caller(), order, |old| old | val)
    }

    /// Replaces the value with its logical XOR with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_xor(&self, val: bool, order: Ordering) -> bool {
        let kind = super::ops::FETCH_XOR;
        self.rmw_at(kind, std::panic::Location::caller(), order, |old| old ^ val)
    }

    /// Negates the value; returns the previous value. A switch point; every ordering is
    /// allowed.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        let kind = super::ops::FETCH_NOT;
        self.rmw_at(kind, std::panic::Location::caller(), order, |old| !old)
    }
}

impl Default for AtomicBool {
    /// An atomic holding `false`.
    fn default() -> Self {
        AtomicBool::new(false)
    }
}

impl From<bool> for AtomicBool {
    /// Converts a `bool` into an atomic holding it.
    fn from(v: bool) -> Self {
        AtomicBool::new(v)
    }
}

impl fmt::Debug for AtomicBool {
    /// Formats the value, read without a switch point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value(), f)
    }
}
