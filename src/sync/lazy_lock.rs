//! [`LazyLock`]: a value computed on first access.

use std::fmt;
use std::ops::Deref;
use std::panic::Location;

use super::once::{Begin, OnceCore};
use crate::runtime::OpKind;

/// A value initialized by `F` on first access, as [`std::sync::LazyLock`].
///
/// # Differences from std
/// - Every access (`force`, `Deref`) is a switch point; so is the end of the initializer,
///   where waiting threads are woken.
/// - `Debug` reads the value without a switch point.
/// - An initializer that dereferences its own `LazyLock` is reported as a deadlock naming
///   the place where it started (std may deadlock or panic).
/// - The unstable methods (`into_inner`, `force_mut`, `get`, ...) are not provided.
pub struct LazyLock<T, F = fn() -> T> {
    core: OnceCore,
    value: std::sync::OnceLock<T>,
    /// The initializer until it is taken to run.
    init: parking_lot::Mutex<Option<F>>,
}

impl<T, F: FnOnce() -> T> LazyLock<T, F> {
    /// A lazy value that `f` will compute.
    pub const fn new(f: F) -> Self {
        LazyLock {
            core: OnceCore::new("LazyLock"),
            value: std::sync::OnceLock::new(),
            init: parking_lot::Mutex::new(Some(f)),
        }
    }

    /// The value, computing it if this is the first access. Other threads wait while one
    /// computes it. If the initializer panics the `LazyLock` is poisoned and every later
    /// access panics, as in std.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        let loc = Location::caller();
        let obj = this.core.switch(OpKind::LazyLockForce, loc);
        match this.core.begin(obj, "initialize", false, true, loc) {
            Begin::Complete => {}
            Begin::Poisoned => panic!("LazyLock instance has previously been poisoned"),
            Begin::Run(runner) => {
                let f = this
                    .init
                    .lock()
                    .take()
                    .expect("an uninitialized LazyLock keeps its initializer");
                let value = f();
                this.core.switch(OpKind::LazyLockComplete, loc);
                let fresh = this.value.set(value).is_ok();
                debug_assert!(
                    fresh,
                    "only the thread running the initializer stores a value"
                );
                runner.complete();
            }
        }
        this.value
            .get()
            .expect("a completed LazyLock holds a value")
    }
}

impl<T, F: FnOnce() -> T> Deref for LazyLock<T, F> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T: Default> Default for LazyLock<T> {
    fn default() -> Self {
        LazyLock::new(T::default)
    }
}

impl<T: fmt::Debug, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("LazyLock");
        match self.value.get() {
            Some(value) => d.field(value),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}
