//! Follows a stored schedule as far as it fits the model (or a given number of its decisions),
//! then decides at random: how a test looks again at a failure it stored, after the code
//! changed.
//!
//! "Fits" is looser than replay's check, on purpose: the recorded thread must be able to run
//! (or, for a decision other than a thread's, the same thread must make the same kind of
//! decision with the recorded option available), but its operation may differ, since the fix
//! under test changes operations. Every decision it makes is one the model offers, so every
//! execution it drives is a real execution of the model as it is now.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{Choice, Expected, Pick, RandomStrategy, Refusal, Strategy};
use crate::op::Tid;

/// How far an execution followed its prefix; shared with the driver, which reads it after
/// the execution.
#[derive(Debug, Default)]
pub struct Followed {
    /// Decisions of the prefix followed before the first that did not fit (or all).
    pub fitted: AtomicUsize,
    /// Whether any decision was made at random: if not, the execution is determined by the
    /// prefix, and running it again gives the same.
    pub(crate) improvised: AtomicBool,
}

/// A prefix, then random choices.
#[derive(Debug)]
pub struct PrefixStrategy {
    decisions: Arc<[Expected]>,
    /// How many of `decisions` to follow at most.
    end: usize,
    /// Index of the next decision to follow.
    next: usize,
    /// Set at the first decision that does not fit: from then on `then` decides.
    left: bool,
    then: RandomStrategy,
    followed: Arc<Followed>,
}

impl PrefixStrategy {
    /// Follows at most `limit` of `decisions`, then draws from a random stream seeded with
    /// `seed`; reports how far it got to `followed`.
    pub fn new(
        decisions: Arc<[Expected]>,
        limit: usize,
        seed: u64,
        followed: Arc<Followed>,
    ) -> Self {
        let end = limit.min(decisions.len());
        PrefixStrategy {
            decisions,
            end,
            next: 0,
            left: false,
            then: RandomStrategy::new(seed),
            followed,
        }
    }

    /// The next recorded decision, if still following.
    fn expected(&self) -> Option<&Expected> {
        if self.left || self.next >= self.end {
            None
        } else {
            self.decisions.get(self.next)
        }
    }

    /// Follows the recorded decision (`Some`), or leaves the prefix for good.
    fn follow<T>(&mut self, fits: Option<T>) -> Option<T> {
        match fits {
            Some(v) => {
                self.next += 1;
                self.followed.fitted.store(self.next, Ordering::Relaxed);
                Some(v)
            }
            None => {
                self.left = true;
                self.followed.improvised.store(true, Ordering::Relaxed);
                None
            }
        }
    }
}

impl Strategy for PrefixStrategy {
    fn reads_ops(&self) -> bool {
        false
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        let fits = self
            .expected()
            .filter(|e| e.pick.is_none() && choice.runnable.contains(&e.thread))
            .map(|e| e.thread);
        match self.follow(fits) {
            Some(t) => Ok(t),
            None => self.then.choose(choice),
        }
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        let fits = self.expected().and_then(|e| match e.pick {
            Some((kind, value))
                if kind == pick.kind && e.thread == pick.tid && value < pick.options =>
            {
                Some(value)
            }
            _ => None,
        });
        match self.follow(fits) {
            Some(v) => Ok(v),
            None => self.then.pick(pick),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::PickKind;

    fn thread(t: Tid) -> Expected {
        Expected {
            thread: t,
            options: 2,
            op: "mutex lock".into(),
            pick: None,
        }
    }

    #[test]
    fn follows_while_the_thread_can_run_then_draws() {
        let followed = Arc::new(Followed::default());
        let prefix: Arc<[Expected]> = vec![thread(1), thread(2), thread(1)].into();
        let mut s = PrefixStrategy::new(prefix, usize::MAX, 3, followed.clone());
        let choice = |runnable: &'static [Tid]| Choice {
            runnable,
            ops: &[],
            current: None,
            current_spins: false,
        };
        assert_eq!(s.choose(&choice(&[0, 1])), Ok(1));
        assert!(!followed.improvised.load(Ordering::Relaxed));
        // Thread 2 cannot run here: the prefix ends, for good.
        let drawn = s.choose(&choice(&[0, 1])).unwrap();
        assert!([0, 1].contains(&drawn));
        assert!(followed.improvised.load(Ordering::Relaxed));
        assert_eq!(followed.fitted.load(Ordering::Relaxed), 1);
        // A pick where a thread's choice was recorded does not fit either.
        let pick = Pick {
            kind: PickKind::ReadFrom,
            options: 2,
            tid: 1,
        };
        assert!(s.pick(&pick).unwrap() < 2);
        assert_eq!(followed.fitted.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn follows_no_more_than_its_limit() {
        let followed = Arc::new(Followed::default());
        let prefix: Arc<[Expected]> = vec![thread(1), thread(1)].into();
        let mut s = PrefixStrategy::new(prefix, 1, 5, followed.clone());
        let choice = Choice {
            runnable: &[0, 1],
            ops: &[],
            current: None,
            current_spins: false,
        };
        assert_eq!(s.choose(&choice), Ok(1));
        for _ in 0..20 {
            s.choose(&choice).unwrap();
        }
        assert_eq!(followed.fitted.load(Ordering::Relaxed), 1);
        assert!(followed.improvised.load(Ordering::Relaxed));
    }
}
