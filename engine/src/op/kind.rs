//! Operations as their primitives declare them. The set is open: a primitive declares each of
//! its operations once, as a constant beside its code ([`Operation`]: its name, how it accesses
//! its object, whether it can wait, and the few engine effects it has), and nothing here lists
//! them. Code that needs to tell one operation from another compares kinds; the engine itself
//! only reads what the declaration says.

use super::{Role, Tid};

/// What the engine itself does with an operation, besides recording its access: most have
/// no effect of their own; the others are the ones the scheduler, happens-before and the
/// memory model treat apart. The list is of the engine's notions (threads, parking, memory
/// order), never of a primitive's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// None beyond its access.
    Plain,
    /// Creates a thread or a task: ordered with every other creation (spawn order gives
    /// threads their ids).
    Spawn,
    /// Joins the thread the kind names ([`OpKind::join`]): it can take effect once that
    /// thread finished, and it reads the thread's end.
    Join,
    /// Waits for the thread's own park token (`park`, a task's wait between polls).
    Park,
    /// Gives way to other threads (`yield_now`, `spin_loop`): a thread that only gives way
    /// between two reads of a value is spinning on it.
    Yield,
    /// Tries to take a lock and may fail: a failed try is remembered across the next try of
    /// the thread (a retry loop on `try_lock` is spinning).
    Try,
    /// An atomic access or a fence: the memory model orders it by its `Ordering`.
    Atomic,
    /// On a condition variable, whose waits happens-before follows through their wake-ups.
    Condvar,
}

/// One operation of a primitive, declared once as a constant beside the primitive's code,
/// e.g. `Operation::new("mutex lock").access(Role::Acquire).waits("lock")`.
///
/// An operation is known by its name: schedule files record it, replay compares it, and two
/// declarations with one name are one operation (so each name is declared once; the
/// primitive's type comes first, as in `rwlock read`).
#[derive(Debug)]
pub struct Operation {
    name: &'static str,
    access: Option<Role>,
    effect: Effect,
    /// What a deadlock report says the thread waits to do when the operation cannot take
    /// effect ("lock"); `Some` exactly for the operations that can wait.
    waits: Option<&'static str>,
    observes_only: bool,
    /// One step of a primitive kept under a model lock (a Tokio primitive's section): schedule
    /// files written before such steps had names of their own record them as `mutex lock`.
    section: bool,
}

impl Operation {
    /// An operation named `name`, with no access of its own (see [`Operation::access`]),
    /// no effect, that never waits and changes what it touches.
    pub const fn new(name: &'static str) -> Self {
        Operation {
            name,
            access: None,
            effect: Effect::Plain,
            waits: None,
            observes_only: false,
            section: false,
        }
    }

    /// How it accesses the object it acts on (its `Op::obj`; for a spawn, join or park the
    /// key `hb::primary` gives it). Without one it accesses nothing another thread can see,
    /// or its code declares what it touches (a channel's parts, an `Arc`'s counts).
    pub const fn access(mut self, role: Role) -> Self {
        self.access = Some(role);
        self
    }

    /// Its effect in the engine.
    pub const fn effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }

    /// It can be unable to take effect until another thread acts (the object's
    /// `ObjectState::enabled` says when it can), and a deadlock report then says the thread
    /// waits to `phrase` the object ("lock", "receive on").
    pub const fn waits(mut self, phrase: &'static str) -> Self {
        self.waits = Some(phrase);
        self
    }

    /// It only observes its object, or changes it only when it succeeds (see
    /// `runtime/spins.rs`): a loop of such operations that fail is spinning.
    pub const fn observes_only(mut self) -> Self {
        self.observes_only = true;
        self
    }

    /// Marks a step of a primitive kept under a model lock (the facade declares such steps
    /// with its `sync::section`).
    pub const fn in_section(mut self) -> Self {
        self.section = true;
        self
    }
}

/// An operation, as a thread reaches it: its declaration, and for a join the thread joined.
#[derive(Clone, Copy, Debug)]
pub struct OpKind {
    op: &'static Operation,
    /// The joined thread, for a join; 0 otherwise.
    target: u32,
}

impl PartialEq for OpKind {
    /// The same operation (by name, see [`Operation`]) on the same thread, for a join.
    fn eq(&self, other: &Self) -> bool {
        (std::ptr::eq(self.op, other.op) || self.op.name == other.op.name)
            && self.target == other.target
    }
}

impl Eq for OpKind {}

impl OpKind {
    /// The operation `op` declares.
    pub const fn new(op: &'static Operation) -> Self {
        OpKind { op, target: 0 }
    }

    /// The join `op` declares, of thread `target`.
    pub fn join(op: &'static Operation, target: Tid) -> Self {
        let target = u32::try_from(target).expect("fewer than 2^32 threads");
        OpKind { op, target }
    }

    /// The name reports and schedule files show, e.g. `mutex lock`.
    #[inline]
    pub(crate) fn name(self) -> &'static str {
        self.op.name
    }

    /// How the operation accesses what it acts on, if it says (see [`Operation::access`]).
    #[inline]
    pub(crate) fn role(self) -> Option<Role> {
        self.op.access
    }

    /// Its effect in the engine.
    #[inline]
    pub(crate) fn effect(self) -> Effect {
        self.op.effect
    }

    /// The thread a join joins (see [`Effect::Join`]).
    #[inline]
    pub(crate) fn joined(self) -> Option<Tid> {
        (self.op.effect == Effect::Join).then_some(self.target as Tid)
    }

    /// Whether the operation is on an atomic (or is a fence): the memory model handles it
    /// by its ordering.
    #[inline]
    pub(crate) fn is_atomic(self) -> bool {
        self.op.effect == Effect::Atomic
    }

    /// Whether the operation is on a condvar.
    #[inline]
    pub(crate) fn is_condvar(self) -> bool {
        self.op.effect == Effect::Condvar
    }

    /// Whether the operation can be unable to take effect until another thread acts.
    #[inline]
    pub fn can_wait(self) -> bool {
        self.op.waits.is_some()
    }

    /// What a deadlock report says a thread stopped before this operation waits to do.
    pub const fn waits_to(self) -> &'static str {
        match self.op.waits {
            Some(phrase) => phrase,
            None => self.op.name,
        }
    }

    /// Whether the operation only observes its object (see [`Operation::observes_only`]).
    #[inline]
    pub(crate) fn observes_only(self) -> bool {
        self.op.observes_only
    }

    /// Whether this operation is the one a schedule file recorded as `recorded` (a join of
    /// any thread; a section also as `mutex lock`, its name in files of earlier versions).
    pub(crate) fn is_recorded_as(self, recorded: &str) -> bool {
        self.op.name == recorded || (self.op.section && recorded == "mutex lock")
    }
}

/// The first operation of every thread: starting to run where it was spawned. It only
/// observes (a thread that starts has done nothing yet).
pub const THREAD_START: OpKind = OpKind::new(&Operation::new("thread start").observes_only());

#[cfg(test)]
mod tests {
    use super::*;

    const JOIN: Operation = Operation::new("thread join")
        .access(Role::Acquire)
        .effect(Effect::Join)
        .waits("join");

    #[test]
    fn kinds_are_equal_by_name_and_a_join_by_its_thread_too() {
        static A: Operation = Operation::new("a");
        static ALSO_A: Operation = Operation::new("a").access(Role::Write);
        assert_eq!(OpKind::new(&A), OpKind::new(&ALSO_A));
        assert_ne!(OpKind::new(&A), THREAD_START);
        assert_eq!(OpKind::join(&JOIN, 3), OpKind::join(&JOIN, 3));
        assert_ne!(OpKind::join(&JOIN, 3), OpKind::join(&JOIN, 4));
        assert_eq!(OpKind::join(&JOIN, 4).joined(), Some(4));
        assert_eq!(OpKind::new(&A).joined(), None);
    }

    #[test]
    fn a_join_is_recorded_without_its_thread_and_a_section_also_as_a_mutex_lock() {
        assert!(OpKind::join(&JOIN, 3).is_recorded_as("thread join"));
        assert!(!OpKind::join(&JOIN, 3).is_recorded_as("thread joi"));
        static SEND: Operation = Operation::new("tokio mpsc send").in_section();
        assert!(OpKind::new(&SEND).is_recorded_as("tokio mpsc send"));
        assert!(OpKind::new(&SEND).is_recorded_as("mutex lock"));
        assert!(!THREAD_START.is_recorded_as("mutex lock"));
    }

    #[test]
    fn only_an_operation_that_waits_can_wait_and_says_what_it_waits_for() {
        let lock = OpKind::new(const { &Operation::new("mutex lock").waits("lock") });
        assert!(lock.can_wait());
        assert_eq!(lock.waits_to(), "lock");
        assert!(!THREAD_START.can_wait());
        assert_eq!(THREAD_START.waits_to(), "thread start");
    }
}
