//! [`Slots`]: where a `static` `OnceLock` or `LazyLock` keeps the values of executions other
//! than the first that used it.
//!
//! A value handed out as `&T` may be borrowed for as long as the cell lives (for a `static`,
//! until the process exits), and this crate has no `unsafe` code to end such borrows. So an
//! execution's value is never dropped or overwritten: each execution that initializes the
//! cell takes a slot of its own in an append-only list, and the slots are dropped with the
//! cell. The list grows in segments of doubling size, so a slot never moves once written.

use std::sync::OnceLock as StdOnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::once::{OnceCore, Site};

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

/// Number of segments: segment `s` has `2^s` slots, so this is room for `2^40 - 1` values.
const SEGMENTS: usize = 40;

/// An append-only list of values written once each (see the module).
pub(crate) struct Slots<T> {
    /// The next slot to hand out.
    next: AtomicUsize,
    segments: [StdOnceLock<Box<[StdOnceLock<T>]>>; SEGMENTS],
}

impl<T> Slots<T> {
    /// An empty list.
    pub(crate) fn new() -> Self {
        Slots {
            next: AtomicUsize::new(0),
            segments: [const { StdOnceLock::new() }; SEGMENTS],
        }
    }

    /// Stores `value` in a slot no one else has, returning the slot's index and the value.
    pub(crate) fn push(&self, value: T) -> (usize, &T) {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = self
            .slot(index, true)
            .expect("a new slot's segment is allocated");
        if slot.set(value).is_err() {
            unreachable!("each slot index is handed out once");
        }
        (index, slot.get().expect("the slot was just written"))
    }

    /// The value in slot `index`, if it was written.
    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        self.slot(index, false)?.get()
    }

    /// The cell of slot `index`, allocating its segment if `allocate`.
    fn slot(&self, index: usize, allocate: bool) -> Option<&StdOnceLock<T>> {
        let n = index.checked_add(1)?;
        let segment = (usize::BITS - 1 - n.leading_zeros()) as usize;
        let offset = n - (1 << segment);
        let cells = self.segments.get(segment)?;
        let cells = if allocate {
            cells.get_or_init(|| (0..1usize << segment).map(|_| StdOnceLock::new()).collect())
        } else {
            cells.get()?
        };
        cells.get(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    /// Values stay where they were written while later ones fill new segments.
    #[test]
    fn slots_keep_every_value_in_its_place() {
        let slots = Slots::new();
        let first = slots.push(String::from("0")).1 as *const String;
        for i in 1..100 {
            assert_eq!(slots.push(i.to_string()).0, i);
        }
        for i in 0..100 {
            assert_eq!(slots.get(i), Some(&i.to_string()));
        }
        assert_eq!(slots.get(0).map(|v| v as *const String), Some(first));
        assert_eq!(slots.get(100), None);
        assert_eq!(slots.get(usize::MAX - 1), None);
        assert_eq!(slots.get(usize::MAX), None);
    }
}
