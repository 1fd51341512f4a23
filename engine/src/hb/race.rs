//! Which earlier events an event races with: the pairs whose order a partial-order
//! reduction must try the other way round.
//!
//! Event `e` (earlier) and `e2` (the event that just ended, of thread `p`) race when they
//! conflict on some key, `e` does not happen before `p`'s clock *before* `e2` (so nothing but
//! this conflict orders them), and `e2` could have come first. That last part is where
//! blocking operations need care: a lock taken after another thread released it could not
//! have been taken before that release, so such a pair is passed over and the walk goes on
//! to the release's own acquire, with which `e2` does race (`Role::never_reversed`). When
//! `e2` is an operation that can wait (or the thread was woken to run it) and `p` had no
//! event between `e` and `e2`, `e2` was `p`'s next operation just before `e`: it could have
//! come first if `p` could run there. If `p` could not, it still could have when an event
//! after `e` that does not happen after it, and that `e2` depends on (the wake or the
//! release that let `p` run), could itself have come before `e`: then `e2` after it, both
//! before `e` (the joining thread that the first task's end wakes, and whose poll of the
//! second handle races with the second task's end, `tests/own_async_primitive.rs`); so the
//! pair is passed over only when no such event exists. When `p` did run in between, that
//! cannot be told from here: the pair is kept and the walk goes on, which explores more,
//! never less.
//!
//! Along one key, the walk stops at the first access that happens before `p` and changes
//! the key (everything older happens before it too), and at the first write-like access that
//! races with `e2` for sure (older ones are ordered before it, so they are not immediate
//! races; reversing this one exposes them in a later execution). Reads of different threads
//! are not ordered among themselves, so a write races with each of them.

use super::{Access, Current, Hb, conflict};
use crate::op::Role;

impl Hb {
    /// Fills `self.races` with the events `current` races with, oldest last, no repeats.
    pub(super) fn find_races(&mut self, current: &Current) {
        let mut races = std::mem::take(&mut self.races);
        races.clear();
        for touch in &current.declared {
            let history = self.history(touch.key);
            for access in self.walk(history, current, touch.role) {
                if !races.contains(&access.event) {
                    races.push(access.event);
                }
            }
        }
        self.unseen_races(current, &mut races);
        self.races = races;
    }

    /// The accesses of `history` that race with an access `role` of `current`.
    pub(super) fn walk<'a>(
        &'a self,
        history: &'a [Access],
        current: &'a Current,
        role: Role,
    ) -> impl Iterator<Item = &'a Access> + 'a {
        let p = current.tid;
        let before = &self.clocks[p];
        let prev = self.last_event[p];
        let mut read_race = false;
        let mut done = false;
        history.iter().rev().filter(move |a| {
            if done {
                return false;
            }
            let changes = !a.role.read_like();
            if a.tid == p || before.knows(a.tid, a.epoch) {
                done = changes;
                return false;
            }
            if !a.role.conflicts(role) || Role::never_reversed(a.role, role) {
                return false;
            }
            if changes && read_race {
                done = true;
                return false;
            }
            let sure = match current.may_wait {
                false => Some(true),
                true if prev.is_none_or(|x| x < a.event) => {
                    let e = a.event as usize;
                    match self.enabled_before(e).contains(&p) {
                        true => Some(true),
                        false if self.enabler_after(e, current) => None,
                        false => Some(false),
                    }
                }
                true => None,
            };
            match sure {
                Some(false) => false,
                Some(true) => {
                    done = changes;
                    read_race |= !changes;
                    true
                }
                None => true,
            }
        })
    }

    /// Whether an event after `e` that does not happen after it conflicts with `current`
    /// (of a thread that could not run before `e`): it may be what let that thread run (a
    /// wake, the release of a lock it waited for), and it could run before `e`, and
    /// `current` after it, still before `e`.
    fn enabler_after(&self, e: usize, current: &Current) -> bool {
        (e + 1..self.events.len()).any(|j| {
            self.events[j].tid != current.tid
                && !self.happens_before(e, j)
                && conflict(self.touches(j), &current.declared)
        })
    }
}
