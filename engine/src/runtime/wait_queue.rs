//! The one waiter list of a primitive whose waiters are futures: a [`WaitQueue`] of
//! registered wakers, longest waiting first, each with what its waiter asked for, and the
//! [`WakeList`] its operations leave the wakers to wake or drop in.
//!
//! A thread that cannot go on blocks on its object ([`block`](super::block)): the engine's
//! table of threads is then the object's queue, `Access::wake_all` wakes it, and a deadlock
//! report says what the thread waits to do to which object. A future that cannot go on
//! registers its waker in a queue instead and returns `Pending`, and its thread waits for a
//! wake between polls. The queue tells the engine of each registration (the object of the
//! caller's last operation, the one that found it must wait, and the queue's words), so
//! the report of a thread whose future waits says the same of it: one path for both
//! ("waits to acquire a permit from tokio Semaphore #2 (first used at …)"). A
//! registration counts until the thread's wait between polls ends.
//!
//! Wakers are the program's code: their `wake` or `drop` may call back into the same
//! primitive. So no queue wakes or drops one itself: each operation that takes wakers out
//! leaves them in a [`WakeList`], which the primitive runs once it released its state's
//! lock (the Tokio crate's `Section` does it).

use std::collections::VecDeque;
use std::task::Waker;

use super::{ObjId, Tid, with_state};

/// Wakers taken out of a primitive's waiter lists under its lock: to wake, or only to drop
/// (a waker replaced by a newer one, or its waiter gone), once the lock is released.
#[derive(Debug, Default)]
pub struct WakeList {
    wake: Vec<Waker>,
    drop: Vec<Waker>,
}

impl WakeList {
    /// An empty list (`const`, for a `static` primitive's first state).
    pub const fn new() -> Self {
        WakeList {
            wake: Vec::new(),
            drop: Vec::new(),
        }
    }

    /// Wakes `waker` once the lock is released.
    pub fn wake(&mut self, waker: Waker) {
        self.wake.push(waker);
    }

    /// Wakes `waker`, if any, once the lock is released.
    pub fn wake_some(&mut self, waker: Option<Waker>) {
        self.wake.extend(waker);
    }

    /// Drops `waker`, if any, once the lock is released (it is not woken).
    pub fn dispose(&mut self, waker: Option<Waker>) {
        self.drop.extend(waker);
    }

    /// Moves everything in `other` to this list.
    pub fn append(&mut self, mut other: WakeList) {
        self.wake.append(&mut other.wake);
        self.drop.append(&mut other.drop);
    }

    /// Takes everything out, leaving the list empty.
    pub fn take(&mut self) -> WakeList {
        std::mem::take(self)
    }

    /// Wakes the wakers to wake, in the order they were added, then drops the others. Call
    /// it with no lock of the primitive held. A thread that unwinds runs it too (a permit
    /// dropped by a panicking task wakes the next waiter, as in Tokio).
    pub fn run(self) {
        for waker in self.wake {
            waker.wake();
        }
        drop(self.drop);
    }
}

/// A waiter's place in a [`WaitQueue`]: the future that registered keeps it to find its
/// entry again (to poll it, to leave when dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaitId(u64);

/// Futures waiting for something of one primitive, longest waiting first: each a
/// [`WaitId`], a waker (none for a waiter that registered without waiting, as Tokio's
/// `Notified::enable`) and a `T`, what it asked for (a semaphore's waiter: how many
/// permits it wants and got). Made with the words a deadlock report says its waiters wait
/// to do ("acquire a permit from"); register in the step of the operation that found the
/// waiter must wait (after its switch point): the report names that operation's object.
#[derive(Debug)]
pub struct WaitQueue<T = ()> {
    entries: VecDeque<Entry<T>>,
    next: u64,
    words: &'static str,
}

#[derive(Debug)]
struct Entry<T> {
    id: WaitId,
    waker: Option<Waker>,
    value: T,
    /// The engine counts its registration for a report: as what, on which object.
    noted: Option<(Noted, Option<ObjId>)>,
}

impl<T> WaitQueue<T> {
    /// An empty queue whose waiters wait to do `words` to the primitive (`const`, for a
    /// `static` primitive's first state).
    pub const fn new(words: &'static str) -> Self {
        WaitQueue {
            entries: VecDeque::new(),
            next: 0,
            words,
        }
    }

    /// How many wait.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Registers a waiter at the back that asks for `value`, woken by `waker` (none: it
    /// registered without waiting yet).
    pub fn push(&mut self, value: T, waker: Option<&Waker>) -> WaitId {
        self.next += 1;
        let id = WaitId(self.next);
        let noted = waker.and_then(|waker| registered(self.words, waker, None));
        self.entries.push_back(Entry {
            id,
            waker: waker.cloned(),
            value,
            noted,
        });
        id
    }

    /// A fresh id for a waiter served at once, which never enters the queue (a request met
    /// that its future keeps for its next poll): no waiter in the queue has it.
    pub fn served(&mut self) -> WaitId {
        self.next += 1;
        WaitId(self.next)
    }

    /// Waiter `id` polled again and waits on: `waker` wakes it from now on (the one it
    /// replaces is dropped through `later`; one that wakes the same task is kept). Returns
    /// whether it is still in the queue.
    pub fn set_waker(&mut self, id: WaitId, waker: &Waker, later: &mut WakeList) -> bool {
        let words = self.words;
        let Some(entry) = self.find_mut(id) else {
            return false;
        };
        match &entry.waker {
            Some(old) if old.will_wake(waker) => {}
            _ => later.dispose(entry.waker.replace(waker.clone())),
        }
        entry.noted = registered(words, waker, entry.noted).or(entry.noted);
        true
    }

    /// What waiter `id` asked for, if it is in the queue.
    pub fn get(&self, id: WaitId) -> Option<&T> {
        self.entries.iter().find(|e| e.id == id).map(|e| &e.value)
    }

    /// What waiter `id` asked for, to change, if it is in the queue.
    pub fn get_mut(&mut self, id: WaitId) -> Option<&mut T> {
        self.find_mut(id).map(|e| &mut e.value)
    }

    /// The longest waiting waiter and what it asked for.
    pub fn front_mut(&mut self) -> Option<(WaitId, &mut T)> {
        self.entries.front_mut().map(|e| (e.id, &mut e.value))
    }

    /// The waiter that registered last.
    pub fn back(&self) -> Option<WaitId> {
        self.entries.back().map(|e| e.id)
    }

    /// The waiters, longest waiting first.
    pub fn iter(&self) -> impl Iterator<Item = (WaitId, &T)> {
        self.entries.iter().map(|e| (e.id, &e.value))
    }

    /// Takes waiter `id` out of the queue and wakes it through `later`; returns what it
    /// asked for.
    pub fn wake(&mut self, id: WaitId, later: &mut WakeList) -> Option<T> {
        let entry = self.take(id)?;
        later.wake_some(entry.waker);
        Some(entry.value)
    }

    /// Takes the longest waiting waiter out and wakes it through `later`.
    pub fn wake_front(&mut self, later: &mut WakeList) -> Option<(WaitId, T)> {
        let entry = self.entries.pop_front()?;
        later.wake_some(entry.waker);
        Some((entry.id, entry.value))
    }

    /// Takes every waiter out and wakes them through `later`, longest waiting first.
    pub fn wake_all(&mut self, later: &mut WakeList) {
        for entry in self.entries.drain(..) {
            later.wake_some(entry.waker);
        }
    }

    /// Wakes every waiter through `later`, keeping them in the queue (each polls and finds
    /// out why, as a semaphore's waiters find it closed).
    pub fn wake_each(&mut self, later: &mut WakeList) {
        for entry in &mut self.entries {
            later.wake_some(entry.waker.take());
        }
    }

    /// Waiter `id` leaves without being woken (its future was dropped, or it no longer
    /// waits): its waker is dropped through `later`. Returns what it asked for.
    pub fn remove(&mut self, id: WaitId, later: &mut WakeList) -> Option<T> {
        let entry = self.take(id)?;
        left(self.words, &entry);
        later.dispose(entry.waker);
        Some(entry.value)
    }

    fn take(&mut self, id: WaitId) -> Option<Entry<T>> {
        let i = self.entries.iter().position(|e| e.id == id)?;
        self.entries.remove(i)
    }

    fn find_mut(&mut self, id: WaitId) -> Option<&mut Entry<T>> {
        self.entries.iter_mut().find(|e| e.id == id)
    }
}

/// Tells the engine that the calling thread's future waits to do `words` (`before`: the same
/// waiter's registration it counted earlier); a no-op waker registers nobody's wait.
fn registered(
    words: &'static str,
    waker: &Waker,
    before: Option<(Noted, Option<ObjId>)>,
) -> Option<(Noted, Option<ObjId>)> {
    if waker.will_wake(Waker::noop()) {
        return None;
    }
    let before = before.map(|(noted, _)| noted);
    Some(with_state("a registration in a wait queue", |a| {
        a.awaits(words, before)
    }))
}

/// Tells the engine that the waiter of `entry` left its queue unwoken.
fn left<T>(words: &'static str, entry: &Entry<T>) {
    if let Some((noted, obj)) = entry.noted {
        with_state("a waiter leaving a wait queue", |a| {
            a.unawaits(noted, obj, words)
        });
    }
}

impl WaitQueue<()> {
    /// Registers `waker` for the next wake of all, unless one that wakes the same task is
    /// registered (a task that polls again replaces nothing): the queue of one event, such
    /// as a `watch` channel's change.
    pub fn add(&mut self, waker: &Waker) {
        let words = self.words;
        let same = self
            .entries
            .iter_mut()
            .find(|e| e.waker.as_ref().is_some_and(|w: &Waker| w.will_wake(waker)));
        match same {
            Some(entry) => entry.noted = registered(words, waker, entry.noted).or(entry.noted),
            None => {
                self.push((), Some(waker));
            }
        }
    }

    /// The one waiter of a queue that has at most one (a channel's receiver): `waker`
    /// replaces the one registered (dropped through `later`; one that wakes the same task
    /// is kept).
    pub fn set_only(&mut self, waker: &Waker, later: &mut WakeList) {
        match self.entries.front() {
            Some(e) => {
                let id = e.id;
                self.set_waker(id, waker, later);
            }
            None => {
                self.push((), Some(waker));
            }
        }
    }

    /// Every waiter leaves without being woken: their wakers are dropped through `later`.
    pub fn clear(&mut self, later: &mut WakeList) {
        for entry in self.entries.drain(..) {
            left(self.words, &entry);
            later.dispose(entry.waker);
        }
    }
}

/// What a thread's futures registered to wait for since its last wait between polls
/// ended, for its deadlock report (kept with what the engine knows of a poller, `wakes.rs`).
#[derive(Debug, Default)]
pub(super) struct Awaits {
    list: Vec<Awaited>,
    /// How many of the thread's waits between polls ended (a registration counts in its
    /// own).
    round: u64,
}

/// A wait registered in wait queues: to do `words` to `obj`, by `count` waiters.
#[derive(Debug)]
struct Awaited {
    obj: Option<ObjId>,
    words: &'static str,
    count: u32,
}

/// A registration the engine counted ([`Awaits::note`]): whose, during which of its polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Noted {
    tid: Tid,
    round: u64,
}

impl Noted {
    /// The thread whose future registered.
    pub(super) fn tid(self) -> Tid {
        self.tid
    }
}

impl Awaits {
    /// The thread's wait between polls ended: what it registered before counts no more.
    pub(super) fn wait_ended(&mut self) {
        self.list.clear();
        self.round += 1;
    }

    /// Thread `me`'s future registered to wait to do `words` to `obj`; `before`: the same
    /// waiter's registration counted earlier, which counts once.
    pub(super) fn note(
        &mut self,
        me: Tid,
        obj: Option<ObjId>,
        words: &'static str,
        before: Option<Noted>,
    ) -> Noted {
        let noted = Noted {
            tid: me,
            round: self.round,
        };
        if before == Some(noted) {
            return noted;
        }
        match self.find(obj, words) {
            Some(i) => self.list[i].count = self.list[i].count.saturating_add(1),
            None => self.list.push(Awaited {
                obj,
                words,
                count: 1,
            }),
        }
        noted
    }

    /// A waiter registered as `noted` left its queue unwoken: if it counts still, it
    /// counts no more.
    pub(super) fn unnote(&mut self, noted: Noted, obj: Option<ObjId>, words: &'static str) {
        if noted.round != self.round {
            return;
        }
        if let Some(i) = self.find(obj, words) {
            self.list[i].count = self.list[i].count.saturating_sub(1);
            if self.list[i].count == 0 {
                self.list.remove(i);
            }
        }
    }

    /// The object and the words of each wait, in the order they were first registered.
    pub(super) fn list(&self) -> Vec<(Option<ObjId>, &'static str)> {
        self.list.iter().map(|a| (a.obj, a.words)).collect()
    }

    fn find(&self, obj: Option<ObjId>, words: &'static str) -> Option<usize> {
        self.list
            .iter()
            .position(|a| a.obj == obj && a.words == words)
    }
}
