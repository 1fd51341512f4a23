//! Vector clocks.

use crate::op::Tid;

/// For each thread, how many of its events are known to have happened (index = thread id;
/// missing entries are 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VClock(Vec<u32>);

impl VClock {
    /// The entry of thread `t`.
    pub(crate) fn get(&self, t: Tid) -> u32 {
        self.0.get(t).copied().unwrap_or(0)
    }

    /// Whether the event of thread `t` with number `epoch` happened before this clock.
    pub(crate) fn knows(&self, t: Tid, epoch: u32) -> bool {
        self.get(t) >= epoch
    }

    /// Counts one more event of thread `t` and returns its number (1 for the first).
    pub(crate) fn tick(&mut self, t: Tid) -> u32 {
        if self.0.len() <= t {
            self.0.resize(t + 1, 0);
        }
        self.0[t] += 1;
        self.0[t]
    }

    /// Takes the entry-wise maximum with `other`.
    pub(crate) fn join(&mut self, other: &VClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// The entries, by thread id.
    pub(crate) fn entries(&self) -> &[u32] {
        &self.0
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// Makes this clock equal to `other`, reusing its memory.
    pub(crate) fn copy_from(&mut self, other: &VClock) {
        self.0.clear();
        self.0.extend_from_slice(&other.0);
    }
}

#[cfg(test)]
mod tests {
    use super::VClock;

    #[test]
    fn join_is_entry_wise_maximum_and_knows_reads_epochs() {
        let mut a = VClock::default();
        assert_eq!(a.tick(2), 1);
        let mut b = VClock::default();
        b.tick(0);
        b.tick(0);
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2), a.get(9)), (2, 0, 1, 0));
        assert!(a.knows(0, 2) && !a.knows(0, 3) && a.knows(5, 0));
    }
}
