//! [`OnceLock`]: a cell written once, with waiting while another thread initializes it.

use std::fmt;
use std::panic::Location;

use super::once::{Begin, INITIALIZE, OnceCore, Site, once_op};
use super::values::Values;
use crate::primitive::{self, Blocked, Loc, OpKind, Role, Waits};

/// `get`: reads the cell.
const GET: OpKind = OpKind::new(&once_op("oncelock get", Role::Read));
/// `wait`: reads the cell, blocking until it holds a value.
const WAIT: OpKind = OpKind::new(&once_op("oncelock wait", Role::Read));
/// `set` (and `try_insert`).
const SET: OpKind = OpKind::new(&once_op("oncelock set", Role::Write));
/// `get_or_init` (and its fallible forms): a write, since the first call initializes.
const GET_OR_INIT: OpKind = OpKind::new(&once_op("oncelock get_or_init", Role::Write));
/// The end of an initialization.
const COMPLETE: OpKind = OpKind::new(&once_op("oncelock complete", Role::Write));

const KIND: &str = "OnceLock";

/// A cell that is written at most once, as [`std::sync::OnceLock`].
///
/// # Differences from std
/// - `get`, `set`, `get_or_init` and `wait` are switch points; so is the end of an
///   initializer, where waiting threads are woken. `get_mut`, `take` and `into_inner` have
///   exclusive access and are not.
/// - `Debug` reads the cell without a switch point.
/// - `Clone` is a switch point (it reads the cell as `get` does), so it works only inside a
///   model.
/// - An initializer that calls `get_or_init` on its own cell is reported as a deadlock
///   naming the place where it started (std may deadlock or panic).
/// - The unstable methods (`get_or_try_init`, `try_insert`, ...) are not provided.
/// - A `static` `OnceLock` is empty at the start of every execution. A value handed out may
///   be borrowed for as long as the cell lives, so each execution's value is kept (not
///   dropped) until the cell is: a `static` one keeps one value per execution that set it,
///   until the process exits. Keep such values small, or keep the state in the model.
///   `Debug` (no switch point) shows the value of the first execution that used the cell.
/// - The [`Arc`](super::Arc)s made for the value (by `get_or_init`'s closure, or just
///   before `set` in its argument) are kept with it and are not reported as leaks while the
///   cell lives (see `Arc`); `take`, `into_inner` and `get_mut` give them back to the model.
pub struct OnceLock<T> {
    core: OnceCore,
    values: Values<T>,
}

impl<T> OnceLock<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        OnceLock {
            core: OnceCore::new(KIND),
            values: Values::new(),
        }
    }

    /// The value, if the cell has been initialized. Never waits.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        let site = self.core.switch(GET, Location::caller());
        self.values.get(site)
    }

    /// A mutable reference to the value, if any; no synchronization is needed.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.core.released();
        self.values.first_mut().get_mut()
    }

    /// Blocks until the cell holds a value and returns it.
    #[track_caller]
    pub fn wait(&self) -> &T {
        let loc = Location::caller();
        let site = self.core.switch(WAIT, loc);
        loop {
            if let Some(value) = self.values.get(site) {
                return value;
            }
            primitive::block(Blocked {
                what: Waits::To("get a value from"),
                obj: Some(site.obj()),
                thread: None,
                deadline: None,
                loc,
            });
        }
    }

    /// Stores `value` if the cell is empty; otherwise gives it back. Waits while another
    /// thread initializes the cell.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), T> {
        let loc = Location::caller();
        let made = self.core.mark();
        let site = self.core.switch(SET, loc);
        let mut value = Some(value);
        self.init(site, loc, || {
            value.take().expect("the initializer runs at most once")
        });
        match value {
            None => {
                self.core.keep_made(site, made);
                Ok(())
            }
            Some(value) => Err(value),
        }
    }

    /// The value, running `f` to produce it if the cell is empty. Concurrent callers wait
    /// while one of them runs its `f`; if `f` panics the cell stays empty and the panic
    /// propagates (the cell is not poisoned), as in std.
    #[track_caller]
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        let loc = Location::caller();
        let site = self.core.switch(GET_OR_INIT, loc);
        self.init(site, loc, f)
    }

    /// Runs `f` unless the cell is (or becomes, while waiting) initialized.
    fn init<F: FnOnce() -> T>(&self, site: Site, loc: Loc, f: F) -> &T {
        if let Begin::Run(runner) = self.core.begin(site, INITIALIZE, true, false, loc) {
            let value = f();
            self.core.switch(COMPLETE, loc);
            let value = self.values.store(site, value);
            runner.complete();
            return value;
        }
        self.values
            .get(site)
            .expect("a completed OnceLock holds a value")
    }

    /// Consumes the cell and returns its value, if any.
    pub fn into_inner(self) -> Option<T> {
        self.values.into_first()
    }

    /// Takes the value out, leaving the cell empty; no synchronization is needed.
    pub fn take(&mut self) -> Option<T> {
        self.core.reset();
        self.values.first_mut().take()
    }
}

impl<T> Default for OnceLock<T> {
    fn default() -> Self {
        OnceLock::new()
    }
}

impl<T> From<T> for OnceLock<T> {
    fn from(value: T) -> Self {
        OnceLock {
            core: OnceCore::completed(KIND),
            values: Values::from(value),
        }
    }
}

impl<T: Clone> Clone for OnceLock<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        match self.get() {
            Some(value) => OnceLock::from(value.clone()),
            None => OnceLock::new(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("OnceLock");
        match self.values.first() {
            Some(value) => d.field(value),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}
