//! [`AtomicBool`]: a boolean shared between threads.

use std::fmt;

use super::{Ordering, common_methods};
use crate::runtime::ObjectHandle;

/// A boolean shared between threads, as [`std::sync::atomic::AtomicBool`].
///
/// # Differences from std
/// Every operation acts as `SeqCst` and is a switch point; `compare_exchange_weak` never
/// fails spuriously; see [`crate::sync::atomic`] for the full list.
pub struct AtomicBool {
    handle: ObjectHandle,
    inner: std::sync::atomic::AtomicBool,
}

impl AtomicBool {
    /// A new atomic holding `v`.
    pub const fn new(v: bool) -> Self {
        AtomicBool {
            handle: ObjectHandle::new("AtomicBool"),
            inner: std::sync::atomic::AtomicBool::new(v),
        }
    }

    /// A mutable reference to the value. Not a switch point: `&mut self` proves no other
    /// thread can reach the atomic.
    pub fn get_mut(&mut self) -> &mut bool {
        self.inner.get_mut()
    }

    /// Consumes the atomic and returns its value. Not a switch point.
    pub const fn into_inner(self) -> bool {
        self.inner.into_inner()
    }

    common_methods!(bool);

    /// Replaces the value with its logical AND with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_and(&self, val: bool, order: Ordering) -> bool {
        let _ = order;
        super::enter(
            Some(&self.handle),
            crate::runtime::OpKind::AtomicRmw("atomic fetch_and"),
        );
        let old = self.inner.load(super::RUN);
        self.inner.store(old & val, super::RUN);
        old
    }

    /// Replaces the value with the NOT of its AND with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_nand(&self, val: bool, order: Ordering) -> bool {
        let _ = order;
        super::enter(
            Some(&self.handle),
            crate::runtime::OpKind::AtomicRmw("atomic fetch_nand"),
        );
        let old = self.inner.load(super::RUN);
        self.inner.store(!(old & val), super::RUN);
        old
    }

    /// Replaces the value with its logical OR with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_or(&self, val: bool, order: Ordering) -> bool {
        let _ = order;
        super::enter(
            Some(&self.handle),
            crate::runtime::OpKind::AtomicRmw("atomic fetch_or"),
        );
        let old = self.inner.load(super::RUN);
        self.inner.store(old | val, super::RUN);
        old
    }

    /// Replaces the value with its logical XOR with `val`; returns the previous value. A
    /// switch point; every ordering is allowed.
    #[track_caller]
    pub fn fetch_xor(&self, val: bool, order: Ordering) -> bool {
        let _ = order;
        super::enter(
            Some(&self.handle),
            crate::runtime::OpKind::AtomicRmw("atomic fetch_xor"),
        );
        let old = self.inner.load(super::RUN);
        self.inner.store(old ^ val, super::RUN);
        old
    }

    /// Negates the value; returns the previous value. A switch point; every ordering is
    /// allowed.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        let _ = order;
        super::enter(
            Some(&self.handle),
            crate::runtime::OpKind::AtomicRmw("atomic fetch_not"),
        );
        let old = self.inner.load(super::RUN);
        self.inner.store(!old, super::RUN);
        old
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
        fmt::Debug::fmt(&self.inner.load(super::RUN), f)
    }
}
