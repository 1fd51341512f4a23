//! Happens-before: vector clocks over the events of one execution, and the races between
//! them.
//!
//! An **event** is what one thread does from the moment it is given control at a switch
//! point until it reaches the next one (or blocks, or ends): the operation it was about to
//! perform, and every object that operation (or the code up to the next switch point)
//! touched, each with a [`Role`]. The runtime reports events here as they happen; the
//! partial-order reduction reads them back.
//!
//! Two events **conflict** when they touch one key and not both read-like. Each thread has
//! a clock; each key keeps the clock of its writes and of its reads since the last write. An
//! event joins the clocks of the keys it touches that it conflicts with, so an event
//! happens before another exactly when a chain of program order and conflicts leads from one
//! to the other (the Mazurkiewicz order of the execution).
//!
//! Invariant: `clocks[t]` is the clock of thread `t`'s last event (for a thread that has not
//! run, its parent's clock at the spawn), and `events[i].clock` the clock just after event
//! `i`. An event `a` happens before a later event `b` iff `b.clock` knows `a`'s epoch.

mod clock;
mod race;
mod unseen;

use std::collections::HashMap;

pub(crate) use clock::VClock;

use crate::op::{Effect, ObjId, Op, Role, Tid};

/// What an access is to: an object, or a piece of state that belongs to no object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A primitive in the execution's arena.
    Obj(ObjId),
    /// A part of an object that its operations touch separately, so that operations on
    /// different parts commute: a channel's parts are its order of sends, its count of
    /// senders, its receiver, and one part per value, the slot that the `n`th send fills
    /// and the `n`th receive empties (see `sync::mpsc::chan`).
    Part(ObjId, u32),
    /// A thread's life: its end (released), joins and `is_finished` (acquired, read).
    Thread(Tid),
    /// A thread's park token.
    Park(Tid),
    /// The reference counts of a modelled `Arc` allocation (index in the execution's
    /// allocations, apart from the arena of primitives).
    Alloc(usize),
    /// The order of spawns, which decides thread ids.
    Spawn,
    /// The order of `SeqCst` atomic operations and fences (the memory model's `SeqCst`
    /// clock): each reads and writes it.
    SeqCst,
    /// The virtual clock, read by `Instant::now`; it moves only when no thread can run, and
    /// whatever runs then happens after everything before.
    Time,
    /// Whether a thread held back as a spinner may run again (`runtime/spins.rs`): the event
    /// that lets it go on writes it, the thread's next event reads it.
    Yield(Tid),
    /// The state the model does not see (a `std` atomic or lock, a field behind a raw
    /// pointer, I/O): the events on either side of an explicit yield write it, and **every
    /// event reads it** without declaring so (see `unseen.rs`).
    Unseen,
}

/// One access of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// What it touches.
    pub key: Key,
    /// What it does to it.
    pub role: Role,
}

/// Whether two events (of different threads) with these accesses conflict: some key is
/// touched by both, not both read-like, or one of them writes [`Key::Unseen`], which every
/// event reads.
pub(crate) fn conflict(a: &[Touch], b: &[Touch]) -> bool {
    unseen::writes(a)
        || unseen::writes(b)
        || a.iter()
            .any(|x| b.iter().any(|y| x.key == y.key && x.role.conflicts(y.role)))
}

/// The access operation `op` of thread `me` makes by itself, if any.
pub(crate) fn primary(op: &Op, me: Tid) -> Option<Touch> {
    let role = op.kind.role()?;
    let key = match op.kind.effect() {
        Effect::Join => Key::Thread(op.kind.joined()?),
        Effect::Spawn => Key::Spawn,
        Effect::Park => Key::Park(me),
        _ => Key::Obj(op.obj?),
    };
    Some(Touch { key, role })
}

/// One past access to a key.
#[derive(Clone, Copy, Debug)]
struct Access {
    event: u32,
    tid: Tid,
    /// The accessing event's entry in its own thread's clock.
    epoch: u32,
    role: Role,
}

/// The clocks and accesses of one key.
#[derive(Debug, Default)]
struct KeyState {
    /// The clock of the last conflicting write-like access.
    writes: VClock,
    /// The join of the read-like accesses since then.
    reads: VClock,
    /// Every access, oldest first.
    history: Vec<Access>,
}

/// One finished event.
#[derive(Debug)]
pub struct EventRec {
    /// The thread that made it.
    pub tid: Tid,
    /// The clock just after the event.
    pub(crate) clock: VClock,
    /// The decision (index in the execution's decisions) that chose this event, if it was
    /// chosen among several.
    pub(crate) decision: Option<u32>,
    /// Range of `Hb::touches`.
    touches: (u32, u32),
    /// Range of `Hb::enabled`: the threads that could run before this event (only for
    /// events chosen by a decision; otherwise just `tid` could).
    enabled: (u32, u32),
}

/// The event under way.
#[derive(Debug, Default)]
struct Current {
    tid: Tid,
    decision: Option<u32>,
    /// Whether the event's operation might have been unable to take effect earlier (it can
    /// wait, or the thread was woken from a wait to run it).
    may_wait: bool,
    enabled: (u32, u32),
    /// Accesses the operations declared, merged per key.
    declared: Vec<Touch>,
    /// Keys the event changed through the runtime without declaring a role (written).
    implied: Vec<Key>,
    /// Threads spawned by the event: they start from its clock.
    spawned: Vec<Tid>,
}

/// Happens-before tracking of one execution.
#[derive(Debug, Default)]
pub struct Hb {
    clocks: Vec<VClock>,
    last_event: Vec<Option<u32>>,
    objects: Vec<KeyState>,
    parts: HashMap<(ObjId, u32), KeyState>,
    threads: Vec<KeyState>,
    parks: Vec<KeyState>,
    allocs: Vec<KeyState>,
    yields: Vec<KeyState>,
    spawn: KeyState,
    seq_cst: KeyState,
    time: KeyState,
    events: Vec<EventRec>,
    touches: Vec<Touch>,
    enabled: Vec<Tid>,
    current: Option<Current>,
    /// The last event that wrote [`Key::Unseen`], if any.
    unseen: Option<u32>,
    /// The explicit yields of this execution, by thread and place (`unseen.rs`).
    yielded_at: Vec<(Tid, unseen::Place)>,
    /// The places of explicit yields some thread reached twice in one execution, in any
    /// execution of the search so far: a loop's (`unseen.rs`). Kept by [`Hb::reset`].
    looped: Vec<unseen::Place>,
    /// This execution added to `looped`.
    learned: bool,
    /// The events the last finished event races with (see [`Hb::races`]).
    races: Vec<u32>,
    scratch: VClock,
}

impl Hb {
    /// Forgets everything, keeping memory, for a new execution.
    pub(crate) fn reset(&mut self) {
        self.clocks.clear();
        self.last_event.clear();
        for keys in [
            &mut self.objects,
            &mut self.threads,
            &mut self.parks,
            &mut self.allocs,
            &mut self.yields,
        ] {
            keys.clear();
        }
        self.parts.clear();
        self.spawn = KeyState::default();
        self.seq_cst = KeyState::default();
        self.time = KeyState::default();
        self.events.clear();
        self.touches.clear();
        self.enabled.clear();
        self.current = None;
        self.unseen = None;
        self.yielded_at.clear();
        self.learned = false;
        self.races.clear();
    }

    /// Starts an event of thread `tid`, about to perform `op`; `decision` chose it among
    /// `enabled`; `woken`: the thread was woken from a wait to run it.
    pub(crate) fn begin(
        &mut self,
        tid: Tid,
        op: &Op,
        decision: Option<u32>,
        enabled: &[Tid],
        woken: bool,
    ) {
        debug_assert!(self.current.is_none(), "one event at a time");
        if self.clocks.len() <= tid {
            self.clocks.resize_with(tid + 1, VClock::default);
            self.last_event.resize(tid + 1, None);
        }
        let start = self.enabled.len() as u32;
        if decision.is_some() {
            self.enabled.extend_from_slice(enabled);
        }
        let mut current = Current {
            tid,
            decision,
            may_wait: woken || op.kind.can_wait(),
            enabled: (start, self.enabled.len() as u32),
            ..Current::default()
        };
        if let Some(touch) = primary(op, tid) {
            current.declared.push(touch);
        }
        self.current = Some(current);
    }

    /// The event under way also performs `op` (a thread that unwinds or exits runs its
    /// operations without switching).
    pub(crate) fn also(&mut self, op: &Op) {
        let Some(tid) = self.current.as_ref().map(|c| c.tid) else {
            return;
        };
        if let Some(touch) = primary(op, tid) {
            self.declare(touch.key, touch.role);
        }
    }

    /// The event under way accesses `key` as `role`.
    pub(crate) fn declare(&mut self, key: Key, role: Role) {
        let Some(current) = self.current.as_mut() else {
            return;
        };
        match current.declared.iter_mut().find(|t| t.key == key) {
            Some(touch) => touch.role = touch.role.merge(role),
            None => current.declared.push(Touch { key, role }),
        }
    }

    /// The event under way changed `key` (a write, unless it declared another role for it).
    pub(crate) fn imply(&mut self, key: Key) {
        if let Some(current) = self.current.as_mut()
            && !current.implied.contains(&key)
        {
            current.implied.push(key);
        }
    }

    /// The event under way spawned thread `child`.
    pub(crate) fn spawned(&mut self, child: Tid) {
        if let Some(current) = self.current.as_mut() {
            current.spawned.push(child);
        }
    }

    /// Thread `t` timed out: that happens only once no thread could run, so after every
    /// event so far.
    pub(crate) fn timed_out(&mut self, t: Tid) {
        let mut all = std::mem::take(&mut self.scratch);
        all.clear();
        for clock in &self.clocks {
            all.join(clock);
        }
        if self.clocks.len() <= t {
            self.clocks.resize_with(t + 1, VClock::default);
            self.last_event.resize(t + 1, None);
        }
        self.clocks[t].join(&all);
        self.scratch = all;
    }

    /// Ends the event under way: finds its races ([`Hb::races`]), joins the clocks and
    /// records it. Returns its index, if an event was under way.
    pub(crate) fn end(&mut self) -> Option<usize> {
        let mut current = self.current.take()?;
        for key in std::mem::take(&mut current.implied) {
            if !current.declared.iter().any(|t| t.key == key) {
                current.declared.push(Touch {
                    key,
                    role: Role::Write,
                });
            }
        }
        let index = self.events.len() as u32;
        self.find_races(&current);
        let tid = current.tid;
        let mut clock = std::mem::take(&mut self.clocks[tid]);
        let writes_unseen = unseen::writes(&current.declared);
        self.join_unseen(writes_unseen, &mut clock);
        let joined = || current.declared.iter().filter(|t| t.key != Key::Unseen);
        for touch in joined() {
            let key = self.key(touch.key);
            clock.join(&key.writes);
            if !touch.role.read_like() {
                clock.join(&key.reads);
            }
        }
        let epoch = clock.tick(tid);
        if writes_unseen {
            self.unseen = Some(index);
        }
        for touch in joined() {
            let key = self.key(touch.key);
            if touch.role.read_like() {
                key.reads.join(&clock);
            } else {
                key.writes.copy_from(&clock);
                key.reads.clear();
            }
            key.history.push(Access {
                event: index,
                tid,
                epoch,
                role: touch.role,
            });
        }
        for &child in &current.spawned {
            if self.clocks.len() <= child {
                self.clocks.resize_with(child + 1, VClock::default);
                self.last_event.resize(child + 1, None);
            }
            self.clocks[child].copy_from(&clock);
        }
        let start = self.touches.len() as u32;
        self.touches.extend_from_slice(&current.declared);
        self.events.push(EventRec {
            tid,
            clock: clock.clone(),
            decision: current.decision,
            touches: (start, self.touches.len() as u32),
            enabled: current.enabled,
        });
        self.clocks[tid] = clock;
        self.last_event[tid] = Some(index);
        Some(index as usize)
    }

    /// The earlier events the last finished event races with: they conflict with it, do not
    /// happen before it, and could have come after it (see `race.rs`).
    pub(crate) fn races(&self) -> &[u32] {
        &self.races
    }

    /// Event `i`.
    pub fn event(&self, i: usize) -> &EventRec {
        &self.events[i]
    }

    /// The accesses of event `i`.
    pub fn touches(&self, i: usize) -> &[Touch] {
        let (a, b) = self.events[i].touches;
        &self.touches[a as usize..b as usize]
    }

    /// The threads that could run before event `i`.
    pub(crate) fn enabled_before(&self, i: usize) -> &[Tid] {
        let ev = &self.events[i];
        if ev.decision.is_none() {
            return std::slice::from_ref(&ev.tid);
        }
        let (a, b) = ev.enabled;
        &self.enabled[a as usize..b as usize]
    }

    /// Whether event `a` happens before event `b` (`a < b`).
    pub(crate) fn happens_before(&self, a: usize, b: usize) -> bool {
        let ea = &self.events[a];
        self.events[b].clock.knows(ea.tid, ea.clock.get(ea.tid))
    }

    fn key(&mut self, key: Key) -> &mut KeyState {
        let (table, i) = match key {
            Key::Obj(i) => (&mut self.objects, i),
            Key::Thread(i) => (&mut self.threads, i),
            Key::Park(i) => (&mut self.parks, i),
            Key::Alloc(i) => (&mut self.allocs, i),
            Key::Yield(i) => (&mut self.yields, i),
            Key::Part(o, p) => return self.parts.entry((o, p)).or_default(),
            Key::Spawn => return &mut self.spawn,
            Key::SeqCst => return &mut self.seq_cst,
            Key::Time => return &mut self.time,
            Key::Unseen => unreachable!("Key::Unseen has no table: see `unseen.rs`"),
        };
        if table.len() <= i {
            table.resize_with(i + 1, KeyState::default);
        }
        &mut table[i]
    }

    fn history(&self, key: Key) -> &[Access] {
        let state = match key {
            Key::Obj(i) => self.objects.get(i),
            Key::Part(o, p) => self.parts.get(&(o, p)),
            Key::Thread(i) => self.threads.get(i),
            Key::Park(i) => self.parks.get(i),
            Key::Alloc(i) => self.allocs.get(i),
            Key::Yield(i) => self.yields.get(i),
            Key::Spawn => Some(&self.spawn),
            Key::SeqCst => Some(&self.seq_cst),
            Key::Time => Some(&self.time),
            // Every event reads it: `unseen.rs` walks the events themselves.
            Key::Unseen => None,
        };
        state.map_or(&[], |s| &s.history)
    }
}
