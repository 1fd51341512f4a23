//! [`LazyLock`]: a value computed on first access.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::panic::Location;

use super::once::{Begin, INITIALIZE, OnceCore, once_op};
use super::values::Values;
use crate::primitive::{self, Loc, OpKind, Role};

/// `force` (and the dereference that forces it): a write, since the first one initializes.
const FORCE: OpKind = OpKind::new(&once_op("lazylock force", Role::Write));
/// The end of an initialization.
const COMPLETE: OpKind = OpKind::new(&once_op("lazylock complete", Role::Write));

/// A value initialized by `F` on first access, as [`std::sync::LazyLock`].
///
/// # Differences from std
/// - Every access (`force`, `Deref`) is a switch point; so is the end of the initializer,
///   where waiting threads are woken.
/// - `Debug` reads the value without a switch point.
/// - An initializer that dereferences its own `LazyLock` is reported as a deadlock naming
///   the place where it started (std may deadlock or panic).
/// - The unstable methods (`into_inner`, `force_mut`, `get`, ...) are not provided.
/// - A `static` `LazyLock` is uninitialized at the start of every execution, which runs the
///   initializer again. For that, `force` and `Deref` need `T` and `F` to be `'static`
///   (std's need not be): a lazy value borrowing from its surroundings can be a
///   [`OnceLock`](super::OnceLock) and `get_or_init` instead.
/// - A value handed out may be borrowed for as long as the `LazyLock` lives, so each
///   execution's value is kept (not dropped) until the `LazyLock` is: a `static` one keeps
///   one value per execution that used it, until the process exits. Keep such values small,
///   or keep the state in the model. `Debug` (no switch point) shows the value of the first
///   execution that used it.
/// - The [`Arc`](super::Arc)s the initializer creates are kept with the value and are not
///   reported as leaks while the `LazyLock` lives (see `Arc`).
pub struct LazyLock<T, F = fn() -> T> {
    core: OnceCore,
    values: Values<T>,
    /// The initializer, until it is taken to run; a plain `fn` is kept for the next
    /// execution.
    init: parking_lot::Mutex<Option<F>>,
}

impl<T, F> LazyLock<T, F> {
    /// A lazy value that `f` will compute.
    pub const fn new(f: F) -> Self {
        LazyLock {
            core: OnceCore::new("LazyLock"),
            values: Values::new(),
            init: parking_lot::Mutex::new(Some(f)),
        }
    }
}

impl<T: 'static, F: FnOnce() -> T + 'static> LazyLock<T, F> {
    /// The value, computing it if this is the first access. Other threads wait while one
    /// computes it. If the initializer panics the `LazyLock` is poisoned and every later
    /// access panics, as in std.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        let loc = Location::caller();
        let site = this.core.switch(FORCE, loc);
        match this.core.begin(site, INITIALIZE, false, true, loc) {
            Begin::Complete => {}
            Begin::Poisoned => panic!("LazyLock instance has previously been poisoned"),
            Begin::Run(runner) => {
                let value = this.initialize(loc);
                this.core.switch(COMPLETE, loc);
                let value = this.values.store(site, value);
                runner.complete();
                return value;
            }
        }
        this.values
            .get(site)
            .expect("a completed LazyLock holds a value")
    }

    /// Runs the initializer. A plain `fn` (the initializer of every `static`) is kept for
    /// later executions; any other is taken, and a later execution cannot run it again.
    fn initialize(&self, loc: Loc) -> T {
        let mut init = self.init.lock();
        let plain = init
            .as_ref()
            .and_then(|f| (f as &dyn Any).downcast_ref::<fn() -> T>().copied());
        let f = match plain {
            Some(plain) => {
                drop(init);
                return plain();
            }
            None => init.take(),
        };
        drop(init);
        match f {
            Some(f) => f(),
            None => primitive::misuse(
                "this LazyLock was first used in another execution and its initializer is a \
                 closure, which runs only once: a `static` LazyLock (whose initializer is a \
                 plain `fn`) starts afresh in every execution, but one created outside the \
                 model closure and captured by it does not. Create it inside the model \
                 closure, or make it a `static`."
                    .to_owned(),
                loc,
            ),
        }
    }
}

impl<T: 'static, F: FnOnce() -> T + 'static> Deref for LazyLock<T, F> {
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
        match self.values.first() {
            Some(value) => d.field(value),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}
