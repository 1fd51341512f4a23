//! [`Values`]: where a `OnceLock` or `LazyLock` keeps its value, and a `static` one the
//! values of executions other than the first that used it.
//!
//! A value handed out as `&T` may be borrowed for as long as the cell lives (for a `static`,
//! until the process exits), and this crate has no `unsafe` code to end such borrows. So an
//! execution's value is never dropped or overwritten: each execution that initializes the
//! cell takes a slot of its own in the engine's append-only [`Slots`], dropped with the
//! cell. Which execution is the first, and a later one's slot, the cell's [`OnceCore`]
//! knows (its object is registered afresh in each execution), so the cell keeps its values
//! here rather than in a `PerExecution`, which would claim the first execution by itself.

use std::sync::OnceLock as StdOnceLock;

use super::once::{OnceCore, Site};
use crate::primitive::Slots;

/// The values of a once-written cell: the first execution's, and the later executions' (a
/// `static` cell), each found through its [`Site`].
pub(super) struct Values<T> {
    /// The value of the first execution that used the cell.
    pub(super) first: StdOnceLock<T>,
    /// The values of later executions, allocated when the first of them stores one.
    later: StdOnceLock<Box<Slots<T>>>,
}

impl<T> Values<T> {
    /// No value anywhere.
    pub(super) const fn new() -> Self {
        Values {
            first: StdOnceLock::new(),
            later: StdOnceLock::new(),
        }
    }

    /// The first execution's value is `value`.
    pub(super) fn from(value: T) -> Self {
        Values {
            first: StdOnceLock::from(value),
            later: StdOnceLock::new(),
        }
    }

    /// The value stored at `site`, if any (no switch point).
    pub(super) fn get(&self, core: &OnceCore, site: Site) -> Option<&T> {
        if site.home() {
            return self.first.get();
        }
        let slot = core.slot(site)?;
        self.later.get()?.get(slot)
    }

    /// Stores the value computed at `site`, where no value is stored yet, and returns it.
    pub(super) fn store(&self, core: &OnceCore, site: Site, value: T) -> &T {
        if site.home() {
            if self.first.set(value).is_err() {
                unreachable!("only the thread running the initializer stores a value");
            }
            return self.first.get().expect("the value was just stored");
        }
        let later = self.later.get_or_init(|| Box::new(Slots::new()));
        let (slot, value) = later.push(value);
        core.set_slot(site, slot);
        value
    }
}
