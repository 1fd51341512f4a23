//! The state shared by both ends of one channel, and the operations on it.
//!
//! Values wait in a queue in this facade type; the execution's arena only knows the channel
//! as an object that threads block on. A thread blocks as "send on" while the buffer is full
//! (or while its rendezvous value has not been taken) and as "receive on" while the queue is
//! empty, so whoever changes the queue wakes exactly the threads of the other role.
//!
//! **Parts, for partial-order reduction** (`Key::Part`): operations on different parts of a
//! channel commute, so the reduction need not try both orders. Sends conflict with each
//! other ([`TAIL`]); the `n`th send fills slot `n` and the `n`th receive empties it, so
//! a receive depends on the send whose value it takes (or, finding slot `n` empty, on the
//! send that will fill it), and not on the sends queued behind it; on a channel of capacity
//! `c` the `n`th send also waits for slot `n - c` to be emptied. The count of senders
//! ([`SENDERS`]) matters only to a receive that finds the queue empty, and the receiver
//! ([`RECEIVER`]) to sends. A rendezvous channel is one whole: its hand-over ties a send to
//! the receive that takes it. The parts are declared for reduction only (`order_only`).
//!
//! **Clocks, for the memory model** ([`Published`]): each queued value carries its send's
//! clock, and the receive that takes it acquires that clock only, so a receive knows the
//! send of its value (and, the values coming in order, the sends before it) but nothing a
//! sender did after its send. Senders learn nothing of each other's sends (std's own
//! implementation orders them, but std does not promise it). Besides:
//! - on a bounded channel of capacity `c`, the receive of value `n` publishes its clock for
//!   the send of value `n + c`, which uses the room it made;
//! - a rendezvous send returns only after the receive took its value, and that receive
//!   wakes it, so the sender acquires the receiver's clock at the take (a wake-up's order,
//!   `Memory::woke`); what the receiver does next, it does not know. std promises no more:
//!   the two meet, then each goes on. A rendezvous `try_send` returns at once and learns
//!   nothing of the receiver;
//! - each sender's drop publishes its clock, and a receive that finds every sender gone
//!   acquires them all; the receiver's drop publishes its clock for the sends that fail
//!   after it.
//!
//! A sender woken from a wait acquires the receiver's clock at the take that woke it, also
//! one that then finds no room (std wakes one sender at a time).

use std::collections::VecDeque;
use std::sync::mpsc::{RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::time::Duration;

use crate::primitive::{
    self, Access, Blocked, Key, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Published, Role,
    Tid, Waits,
};

/// The channel's operations. None has an access of its own: each declares the parts of the
/// channel it touches (`Key::Part`), so that a send and a receive of different values commute.
pub(super) mod ops {
    use crate::primitive::{OpKind, Operation};

    /// `send`: waits while the channel is full (or, on a rendezvous channel, until the
    /// receiver takes the value).
    pub(in crate::sync::mpsc) const SEND: OpKind =
        OpKind::new(&Operation::new("channel send").waits("send on"));
    /// `try_send`.
    pub(in crate::sync::mpsc) const TRY_SEND: OpKind =
        OpKind::new(&Operation::new("channel try_send"));
    /// `recv`: waits while the channel is empty and a sender is alive.
    pub(in crate::sync::mpsc) const RECV: OpKind =
        OpKind::new(&Operation::new("channel recv").waits("receive on"));
    /// `recv_timeout`: blocks in the model rather than waiting to take effect, since its
    /// timeout may end the wait.
    pub(in crate::sync::mpsc) const RECV_TIMEOUT: OpKind =
        OpKind::new(&Operation::new("channel recv_timeout"));
    /// `try_recv`.
    pub(in crate::sync::mpsc) const TRY_RECV: OpKind =
        OpKind::new(&Operation::new("channel try_recv"));
    /// A sender's drop (its last clone's drop disconnects the channel).
    pub(in crate::sync::mpsc) const SENDER_DROP: OpKind =
        OpKind::new(&Operation::new("channel sender drop"));
    /// The receiver's drop.
    pub(in crate::sync::mpsc) const RECEIVER_DROP: OpKind =
        OpKind::new(&Operation::new("channel receiver drop"));
}

/// What a sender does while it waits, in deadlock reports: "waits to send on Channel #3".
const SEND: Waits = Waits::To(ops::SEND.waits_to());
/// What the receiver does while it waits: "waits to receive on Channel #3".
const RECV: Waits = Waits::To(ops::RECV.waits_to());

/// The order of sends.
const TAIL: u32 = 0;
/// The count of live senders.
const SENDERS: u32 = 1;
/// Whether the receiver is alive.
const RECEIVER: u32 = 2;
/// Slot `n`, filled by the `n`th send and emptied by the `n`th receive, is part
/// `FIRST_SLOT + n` (modulo what a `u32` holds: parts that coincide only add conflicts).
const FIRST_SLOT: u32 = 3;

fn slot(n: u64) -> u32 {
    FIRST_SLOT.wrapping_add(n as u32)
}

/// What the scheduler knows of a channel, mirrored from [`State`] after every change that
/// matters to it, to tell whether a blocking `recv` or `send` can take effect now. The
/// default is a fresh channel. Cloning a sender is not mirrored: it never makes the count
/// of senders zero or non-zero, which is all the scheduler reads of it.
#[derive(Debug)]
struct ChannelState {
    len: usize,
    bound: Option<usize>,
    senders: usize,
    receiver: bool,
}

impl Default for ChannelState {
    fn default() -> Self {
        ChannelState {
            len: 0,
            bound: None,
            senders: 1,
            receiver: true,
        }
    }
}

impl ObjectState for ChannelState {
    fn enabled(&self, kind: OpKind, _me: Tid) -> bool {
        match kind {
            k if k == ops::RECV => self.len > 0 || self.senders == 0,
            k if k == ops::SEND => {
                !self.receiver
                    || match self.bound {
                        None => true,
                        Some(0) => self.len == 0,
                        Some(n) => self.len < n,
                    }
            }
            _ => true,
        }
    }
}

/// One channel: its handle in the model and its queue.
pub(super) struct Chan<T> {
    handle: ObjectHandle,
    state: parking_lot::Mutex<State<T>>,
}

/// The queue and who is still connected. Only one model thread runs at a time, so the lock
/// around it is never contended; it is never held across a switch point or a `block`.
struct State<T> {
    /// The values queued, each with its send's clock.
    queue: VecDeque<(T, Published)>,
    /// `None` for `channel()`; `Some(0)` for a rendezvous channel, whose queue holds at most
    /// the one value being handed over.
    bound: Option<usize>,
    /// Live `Sender`s or `SyncSender`s.
    senders: usize,
    /// Whether the `Receiver` is alive.
    receiver: bool,
    /// Values queued so far; a rendezvous sender's ticket is the count before its value.
    queued: u64,
    /// Values the receiver took so far; a rendezvous send completes once `taken > ticket`.
    taken: u64,
    /// What the dropped senders published; a receive that finds every sender gone
    /// acquires it.
    drops: Published,
    /// What the receiver's drop published, for the sends that fail after it.
    gone: Published,
    /// On a bounded channel of capacity `c > 0`, the clocks of the receives whose room no
    /// send used yet, oldest first: the receive of value `n` is acquired by the send of
    /// value `n + c`. Never longer than `c`: a send uses one as it queues value `c` or later.
    room: VecDeque<Published>,
}

impl<T> State<T> {
    /// Whether a blocking `send` may queue its value now.
    fn has_room(&self) -> bool {
        match self.bound {
            None => true,
            Some(0) => self.queue.is_empty(),
            Some(n) => self.queue.len() < n,
        }
    }

    /// Queues `value` for a send that found room, and returns its ticket (the count of
    /// values before it). Declares the parts the send touched; its value carries the
    /// sender's clock, after it acquired, on a bounded channel, the receive that made its
    /// room.
    fn push(&mut self, obj: ObjId, value: T) -> u64 {
        let ticket = self.queued;
        let receiver = (RECEIVER, Role::Read);
        // On a bounded channel it needed the room that the receive of value `ticket - c`
        // made; otherwise the receiver stands in again (a repeated access adds nothing).
        let needed = self.bound.filter(|&c| c > 0 && ticket >= c as u64);
        let room = match needed {
            Some(c) => (slot(ticket - c as u64), Role::Read),
            None => receiver,
        };
        let made = needed.and_then(|_| self.room.pop_front());
        debug_assert!(
            needed.is_none() || made.is_some(),
            "the receive that made room left its clock"
        );
        let filled = (slot(ticket), Role::Write);
        let mut carried = Published::default();
        with_access(|a| {
            let parts = [(TAIL, Role::Write), filled, receiver, room];
            declare_parts(a, obj, self.bound, &parts);
            if let Some(made) = &made {
                a.acquire(made);
            }
            a.publish(&mut carried);
        });
        self.queue.push_back((value, carried));
        self.queued += 1;
        ticket
    }

    /// Takes the oldest value, for the receive of value `taken`: declares the slot it
    /// empties and acquires the value's clock; on a bounded channel, leaves the receiver's
    /// clock for the send that will use the room.
    fn pop(&mut self, obj: ObjId) -> Option<T> {
        let (value, carried) = self.queue.pop_front()?;
        let emptied = (slot(self.taken), Role::Write);
        self.taken += 1;
        let keeps_room = matches!(self.bound, Some(c) if c > 0);
        let mut made = Published::default();
        with_access(|a| {
            declare_parts(a, obj, self.bound, &[emptied]);
            a.acquire(&carried);
            if keeps_room {
                a.publish(&mut made);
            }
        });
        if keeps_room {
            self.room.push_back(made);
        }
        Some(value)
    }

    /// Declares the parts a send that found no room read: the order of sends, and the slot
    /// whose receive would make room.
    fn full(&self, obj: ObjId) {
        let c = self.bound.unwrap_or(0) as u64;
        let waits_for = slot(self.queued.saturating_sub(c));
        touched(
            obj,
            self.bound,
            &[
                (TAIL, Role::Read),
                (waits_for, Role::Read),
                (RECEIVER, Role::Read),
            ],
        );
    }

    /// A send found the receiver gone: it acquires the receiver's drop.
    fn disconnected(&self, obj: ObjId) {
        with_access(|a| {
            declare_parts(a, obj, self.bound, &[(RECEIVER, Role::Read)]);
            a.acquire(&self.gone);
        });
    }
}

impl<T> Chan<T> {
    /// A channel with one sender and a receiver; `bound` as in [`State::bound`].
    pub(super) fn new(bound: Option<usize>) -> Self {
        Chan {
            // Made by a function (`channel`), a channel has no `LazyLock` to advise.
            handle: ObjectHandle::with_state("Channel", || Box::<ChannelState>::default())
                .fresh(None),
            state: parking_lot::Mutex::new(State {
                queue: VecDeque::new(),
                bound,
                senders: 1,
                receiver: true,
                queued: 0,
                taken: 0,
                drops: Published::default(),
                gone: Published::default(),
                room: VecDeque::new(),
            }),
        }
    }

    /// Queues `value`, waiting for room (and, on a rendezvous channel, for the receiver to
    /// take it). Fails with the value back once the receiver is gone.
    pub(super) fn send(&self, value: T, loc: Loc) -> Result<(), SendError<T>> {
        let obj = id(primitive::switch_point(ops::SEND, Some(&self.handle), loc));
        let ticket = loop {
            let mut st = self.state.lock();
            if !st.receiver {
                st.disconnected(obj);
                return Err(SendError(value));
            }
            if st.has_room() {
                let ticket = st.push(obj, value);
                mirror(obj, &st);
                drop(st);
                wake(obj, RECV);
                break ticket;
            }
            st.full(obj);
            drop(st);
            wait(obj, SEND, None, loc);
        };
        if self.state.lock().bound == Some(0) {
            return self.await_handover(obj, ticket, loc);
        }
        Ok(())
    }

    /// Waits until the receiver has taken the rendezvous value `ticket`, or takes it back if
    /// the receiver is dropped first.
    fn await_handover(&self, obj: ObjId, ticket: u64, loc: Loc) -> Result<(), SendError<T>> {
        loop {
            let mut st = self.state.lock();
            if st.taken > ticket {
                return Ok(());
            }
            if !st.receiver {
                // A rendezvous queue holds only the value being handed over: ours.
                let (value, _) = st
                    .queue
                    .pop_back()
                    .expect("an untaken rendezvous value is still queued");
                with_access(|a| a.acquire(&st.gone));
                mirror(obj, &st);
                return Err(SendError(value));
            }
            drop(st);
            wait(obj, SEND, None, loc);
        }
    }

    /// Queues `value` only if that needs no waiting: there is room in the buffer or, on a
    /// rendezvous channel, the receiver is blocked in `recv` and the hand-over slot is free.
    pub(super) fn try_send(&self, value: T, loc: Loc) -> Result<(), TrySendError<T>> {
        let obj = id(primitive::switch_point(
            ops::TRY_SEND,
            Some(&self.handle),
            loc,
        ));
        let rendezvous = self.state.lock().bound == Some(0);
        let receiver_waiting = rendezvous && receiver_waiting(obj);
        let mut st = self.state.lock();
        if !st.receiver {
            st.disconnected(obj);
            drop(st);
            primitive::unchanged();
            return Err(TrySendError::Disconnected(value));
        }
        let room = match st.bound {
            Some(0) => receiver_waiting && st.queue.is_empty(),
            _ => st.has_room(),
        };
        if !room {
            st.full(obj);
            drop(st);
            primitive::unchanged();
            return Err(TrySendError::Full(value));
        }
        st.push(obj, value);
        mirror(obj, &st);
        drop(st);
        wake(obj, RECV);
        Ok(())
    }

    /// Takes the oldest value, waiting for one for at most `timeout` of virtual time (`None`
    /// waits for ever). Fails once the queue is empty and every sender is gone; that is
    /// checked before the timeout, as std does.
    pub(super) fn recv(
        &self,
        kind: OpKind,
        timeout: Option<Duration>,
        loc: Loc,
    ) -> Result<T, RecvTimeoutError> {
        let obj = id(primitive::switch_point(kind, Some(&self.handle), loc));
        let api = "interleave_test::sync::mpsc::Receiver::recv_timeout";
        let deadline = timeout.map(|t| primitive::with_state(api, |a| a.now().saturating_add(t)));
        loop {
            match self.take(obj) {
                Ok(value) => return Ok(value),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            if let Some(deadline) = deadline
                && (primitive::with_state(api, |a| a.now()) >= deadline
                    || primitive::early(api, Some(deadline), false) == primitive::Early::TimedOut)
            {
                return Err(RecvTimeoutError::Timeout);
            }
            wait(obj, RECV, deadline, loc);
        }
    }

    /// Takes the oldest value if there is one, without waiting.
    pub(super) fn try_recv(&self, loc: Loc) -> Result<T, TryRecvError> {
        let obj = id(primitive::switch_point(
            ops::TRY_RECV,
            Some(&self.handle),
            loc,
        ));
        let taken = self.take(obj);
        if taken.is_err() {
            primitive::unchanged();
        }
        taken
    }

    /// Pops a value and wakes the senders waiting for room or for their hand-over. Finding
    /// every sender gone, acquires their drops.
    fn take(&self, obj: ObjId) -> Result<T, TryRecvError> {
        let mut st = self.state.lock();
        let next = slot(st.taken);
        match st.pop(obj) {
            Some(value) => {
                let bounded = st.bound.is_some();
                mirror(obj, &st);
                drop(st);
                if bounded {
                    wake(obj, SEND);
                }
                Ok(value)
            }
            None => with_access(|a| {
                declare_parts(
                    a,
                    obj,
                    st.bound,
                    &[(next, Role::Read), (SENDERS, Role::Read)],
                );
                if st.senders == 0 {
                    a.acquire(&st.drops);
                    Err(TryRecvError::Disconnected)
                } else {
                    Err(TryRecvError::Empty)
                }
            }),
        }
    }

    /// A sender was cloned.
    pub(super) fn add_sender(&self) {
        self.state.lock().senders += 1;
    }

    /// A sender was dropped (created at `loc`); it publishes its clock for the receive that
    /// finds every sender gone, and the last one wakes a waiting receiver.
    pub(super) fn drop_sender(&self, loc: Loc) {
        let obj = self.drop_switch_point(ops::SENDER_DROP, loc);
        let last = {
            let mut st = self.state.lock();
            st.senders -= 1;
            if let Some(obj) = obj {
                let st = &mut *st;
                with_access(|a| {
                    declare_parts(a, obj, st.bound, &[(SENDERS, Role::Write)]);
                    a.publish(&mut st.drops);
                });
                mirror(obj, st);
            }
            st.senders == 0
        };
        if let (true, Some(obj)) = (last, obj) {
            wake(obj, RECV);
        }
    }

    /// The receiver (created at `loc`) was dropped: queued values are dropped, as std does,
    /// and every waiting sender fails, acquiring the drop's clock. A rendezvous value stays
    /// for its sender to take back.
    pub(super) fn drop_receiver(&self, loc: Loc) {
        let obj = self.drop_switch_point(ops::RECEIVER_DROP, loc);
        let discarded = {
            let mut st = self.state.lock();
            st.receiver = false;
            let discarded = if st.bound == Some(0) {
                VecDeque::new()
            } else {
                std::mem::take(&mut st.queue)
            };
            if let Some(obj) = obj {
                let st = &mut *st;
                with_access(|a| {
                    declare_parts(a, obj, st.bound, &[(RECEIVER, Role::Write)]);
                    a.publish(&mut st.gone);
                });
                mirror(obj, st);
            }
            discarded
        };
        if let Some(obj) = obj {
            wake(obj, SEND);
        }
        // Dropped outside the lock: a value's destructor may use the model (a `Sender`).
        drop(discarded);
    }

    /// The switch point of dropping an end (`in_model` is always true now: an end that
    /// outlived its execution is dropped in the OS thread's ambient one).
    fn drop_switch_point(&self, kind: OpKind, loc: Loc) -> Option<ObjId> {
        if !primitive::in_model() {
            return None;
        }
        primitive::switch_point(kind, Some(&self.handle), loc)
    }
}

/// Tells the scheduler the channel's counts after a change (see [`ChannelState`]).
fn mirror<T>(obj: ObjId, st: &State<T>) {
    primitive::with_state("interleave_test::sync::mpsc", |a| {
        *a.obj_untracked::<ChannelState>(obj) = ChannelState {
            len: st.queue.len(),
            bound: st.bound,
            senders: st.senders,
            receiver: st.receiver,
        };
    });
}

/// Declares, for partial-order reduction, the `parts` of channel `obj` (of capacity
/// `bound`) the running operation touched.
fn touched(obj: ObjId, bound: Option<usize>, parts: &[(u32, Role)]) {
    with_access(|a| declare_parts(a, obj, bound, parts));
}

/// [`touched`] under an access held already. A rendezvous channel is declared whole. The
/// memory model learns nothing from this: the channel's clocks are its own.
fn declare_parts(a: &mut Access<'_>, obj: ObjId, bound: Option<usize>, parts: &[(u32, Role)]) {
    if bound == Some(0) {
        a.order_only(Key::Obj(obj), Role::Write);
    } else {
        for &(part, role) in parts {
            a.order_only(Key::Part(obj, part), role);
        }
    }
}

/// Runs `f` on the execution's state.
fn with_access<R>(f: impl FnOnce(&mut Access<'_>) -> R) -> R {
    primitive::with_state("interleave_test::sync::mpsc", f)
}

fn id(obj: Option<ObjId>) -> ObjId {
    obj.expect("a switch point on an object returns its id")
}

/// Blocks the calling thread on channel `obj` as `what` (`SEND` or `RECV`).
fn wait(obj: ObjId, what: Waits, deadline: Option<Duration>, loc: Loc) {
    primitive::block(Blocked {
        what,
        obj: Some(obj),
        thread: None,
        deadline,
        loc,
    });
}

/// Wakes every thread blocked on channel `obj` as `what`; each re-checks the queue.
fn wake(obj: ObjId, what: Waits) {
    primitive::with_state("interleave_test::sync::mpsc", |a| {
        a.wake_doing(obj, Some(what))
    });
}

/// Whether the receiver of channel `obj` is blocked in `recv` (or `recv_timeout`), or
/// stopped before a `recv` that cannot take effect yet.
fn receiver_waiting(obj: ObjId) -> bool {
    primitive::with_state("interleave_test::sync::mpsc::SyncSender::try_send", |a| {
        a.any_waiting(obj, RECV) || a.any_stopped_before(obj, ops::RECV)
    })
}
