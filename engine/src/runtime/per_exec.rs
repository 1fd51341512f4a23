//! [`PerExecution`]: the one store for the state of a primitive that several executions use
//! (a `static`, or one made outside the model closure), one state per execution.
//!
//! Every execution must start from the state the program made the primitive with: one that
//! found what an earlier execution left would not replay, and a search would count states
//! no run of the program can reach. A primitive whose state the object table holds entirely
//! says so with [`ObjectHandle::restorable`](super::ObjectHandle::restorable), and the
//! engine registers it afresh in each execution; a primitive that keeps state of its own (a
//! semaphore's waiters, a cell's value, a lock's data) keeps it in a `PerExecution`:
//! - the first execution that uses it (the one that claims it) has the **home** state, the
//!   one the primitive was made with, which code outside any model reads too;
//! - each later execution gets a state of its own, made on its first use, in one of two
//!   ways, chosen by what the program may borrow:
//!   - [`lend`](PerExecution::lend): the state lives with the execution and is dropped when
//!     it ends, lent for one operation at a time (a semaphore's counters, read and written
//!     under the operation's own lock); a run of many executions does not grow;
//!   - [`get`](PerExecution::get): the state is kept until the primitive is dropped, in an
//!     append-only list ([`Slots`]), since the program may borrow it for as long as the
//!     primitive lives (a cell's value, a lock's data behind a guard) and the engine has no
//!     `unsafe` code to end such borrows: a `static` grows by one state per execution that
//!     used it, as a `static` `OnceLock` keeps each execution's value.
//!
//! A primitive uses one of the two for all its later states. The claim is made by the
//! first use from any execution, an OS thread's ambient execution included; a primitive
//! whose object the engine registers afresh in each execution (a once-cell) knows the first
//! execution from its handle instead, and says so (`get_at`).

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::with_exec;

/// A primitive's state, one per execution that uses it (see the module).
pub struct PerExecution<T> {
    /// The state of the first execution that used the primitive.
    home: T,
    /// That execution: 0 until a first use claims it.
    owner: AtomicU64,
    /// The states of later executions, for [`get`](Self::get): allocated when the first of
    /// them uses the primitive.
    kept: OnceLock<Box<Kept<T>>>,
    /// The primitive's key among the states an execution holds, for
    /// [`lend`](Self::lend): 0 until a later execution first uses it.
    key: AtomicU64,
}

/// The states of later executions that [`PerExecution::get`] keeps, and which execution
/// has which.
struct Kept<T> {
    index: parking_lot::Mutex<Vec<(u64, usize)>>,
    states: Slots<T>,
}

/// The calling execution's state of a [`PerExecution`] that lends later states: the home
/// state, or the execution's own, lent for the operation.
pub enum StateRef<'a, T> {
    /// The first execution's (or that of a primitive only one execution used).
    Home(&'a T),
    /// A later execution's, which holds it and drops it when it ends.
    Lent(Arc<T>),
}

impl<T: std::fmt::Debug> std::fmt::Debug for StateRef<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateRef::Home(home) => f.debug_tuple("Home").field(home).finish(),
            StateRef::Lent(lent) => f.debug_tuple("Lent").field(lent).finish(),
        }
    }
}

impl<T> std::ops::Deref for StateRef<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            StateRef::Home(home) => home,
            StateRef::Lent(lent) => lent,
        }
    }
}

impl<T> PerExecution<T> {
    /// A primitive's states, `home` for the first execution that uses it; later ones make
    /// their own.
    pub const fn new(home: T) -> Self {
        PerExecution {
            home,
            owner: AtomicU64::new(0),
            kept: OnceLock::new(),
            key: AtomicU64::new(0),
        }
    }

    /// The state of the calling execution, made by `make` on its first use if the
    /// execution is not the first; kept until the primitive is dropped (see the module).
    pub fn get(&self, make: impl FnOnce() -> T) -> &T {
        match self.later_execution() {
            None => &self.home,
            Some(exec) => self.kept_state(exec, make),
        }
    }

    /// [`get`](Self::get) for a primitive that knows whether the calling execution is the
    /// first (`home`): one whose object the engine registers afresh in each execution, whose
    /// handle tells the first ([`first_used_here`](super::first_used_here)). The instance
    /// then claims nothing itself: a primitive uses either this or `get` and `lend`.
    pub fn get_at(&self, home: bool, make: impl FnOnce() -> T) -> &T {
        match home {
            true => &self.home,
            false => self.kept_state(with_exec(|ctx| ctx.exec.id), make),
        }
    }

    /// The state [`get_at`](Self::get_at) would return, if the calling execution has one
    /// yet (the home state always exists).
    pub fn find_at(&self, home: bool) -> Option<&T> {
        if home {
            return Some(&self.home);
        }
        let exec = with_exec(|ctx| ctx.exec.id);
        let kept = self.kept.get()?;
        let slot = slot_of(&kept.index.lock(), exec)?;
        kept.states.get(slot)
    }

    /// The home state (the first execution's, or the only one), from any execution or
    /// none.
    pub fn home(&self) -> &T {
        &self.home
    }

    /// The home state, mutably: with exclusive access no later execution can use it.
    pub fn home_mut(&mut self) -> &mut T {
        &mut self.home
    }

    /// The home state.
    pub fn into_home(self) -> T {
        self.home
    }

    /// The calling execution, unless it is the one that owns the home state (claimed by
    /// the first use: `owner` is 0 until then).
    fn later_execution(&self) -> Option<u64> {
        let exec = with_exec(|ctx| ctx.exec.id);
        let claimed = match self.owner.load(Ordering::Acquire) {
            0 => match self
                .owner
                .compare_exchange(0, exec, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => exec,
                Err(owner) => owner,
            },
            owner => owner,
        };
        (claimed != exec).then_some(exec)
    }

    /// The kept state of a later execution `exec`, made on its first use.
    fn kept_state(&self, exec: u64, make: impl FnOnce() -> T) -> &T {
        let kept = self.kept.get_or_init(|| {
            Box::new(Kept {
                index: parking_lot::Mutex::new(Vec::new()),
                states: Slots::new(),
            })
        });
        let mut index = kept.index.lock();
        let slot = match slot_of(&index, exec) {
            Some(slot) => slot,
            None => {
                let (slot, _) = kept.states.push(make());
                index.push((exec, slot));
                slot
            }
        };
        drop(index);
        kept.states
            .get(slot)
            .expect("a pushed slot holds its state")
    }
}

impl<T: Send + Sync + 'static> PerExecution<T> {
    /// The state of the calling execution, made by `make` on its first use if the
    /// execution is not the first; a later execution's is dropped when it ends (see the
    /// module).
    pub fn lend(&self, make: impl FnOnce() -> T) -> StateRef<'_, T> {
        if self.later_execution().is_none() {
            return StateRef::Home(&self.home);
        }
        static NEXT_KEY: AtomicU64 = AtomicU64::new(1);
        let key = match self.key.load(Ordering::Acquire) {
            0 => {
                let new = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
                match self
                    .key
                    .compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => new,
                    Err(key) => key,
                }
            }
            key => key,
        };
        StateRef::Lent(lent_state(key, make))
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PerExecution<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.home.fmt(f)
    }
}

/// The slot of execution `exec`'s kept state in `index`, if it has one (from the end: the
/// newest entries are the likeliest).
fn slot_of(index: &[(u64, usize)], exec: u64) -> Option<usize> {
    index
        .iter()
        .rev()
        .find(|&&(e, _)| e == exec)
        .map(|&(_, slot)| slot)
}

/// The calling execution's state `key`, made by `make` on its first use and dropped when
/// the execution is.
fn lent_state<T: Send + Sync + 'static>(key: u64, make: impl FnOnce() -> T) -> Arc<T> {
    let lent = with_exec(|ctx| {
        let mut st = ctx.exec.state.lock();
        if let Some((_, state)) = st.lent.iter().find(|(k, _)| *k == key) {
            return Arc::clone(state);
        }
        let state: Arc<dyn Any + Send + Sync> = Arc::new(make());
        st.lent.push((key, Arc::clone(&state)));
        state
    });
    lent.downcast()
        .unwrap_or_else(|_| unreachable!("a key names the states of one primitive, of one type"))
}

/// Number of segments: segment `s` has `2^s` slots, so this is room for `2^40 - 1` values.
const SEGMENTS: usize = 40;

/// An append-only list of values written once each, which never move: where a primitive
/// keeps what the program may borrow for as long as the primitive lives (see the module).
/// It grows in segments of doubling size.
pub struct Slots<T> {
    /// The next slot to hand out.
    next: AtomicUsize,
    segments: [OnceLock<Box<[OnceLock<T>]>>; SEGMENTS],
}

impl<T> Slots<T> {
    /// An empty list.
    pub fn new() -> Self {
        Slots {
            next: AtomicUsize::new(0),
            segments: [const { OnceLock::new() }; SEGMENTS],
        }
    }

    /// Stores `value` in a slot no one else has, returning the slot's index and the value.
    pub fn push(&self, value: T) -> (usize, &T) {
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
    pub fn get(&self, index: usize) -> Option<&T> {
        self.slot(index, false)?.get()
    }

    /// The cell of slot `index`, allocating its segment if `allocate`.
    fn slot(&self, index: usize, allocate: bool) -> Option<&OnceLock<T>> {
        let n = index.checked_add(1)?;
        let segment = (usize::BITS - 1 - n.leading_zeros()) as usize;
        let offset = n - (1 << segment);
        let cells = self.segments.get(segment)?;
        let cells = if allocate {
            cells.get_or_init(|| (0..1usize << segment).map(|_| OnceLock::new()).collect())
        } else {
            cells.get()?
        };
        cells.get(offset)
    }
}

impl<T> std::fmt::Debug for Slots<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots")
            .field("written", &self.next.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots::new()
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
