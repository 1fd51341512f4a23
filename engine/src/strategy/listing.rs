//! The strategies, listed once: each has a row of [`LISTED`] (its name, how a run drives
//! it, and, for one a user chooses, its maker). A strategy a user chooses is also a variant
//! of [`StrategyKind`](crate::settings::StrategyKind) (its parameters, its name, how the
//! environment chooses it); what a run does with a name is its row here.

use super::{Make, dfs, pct, random};
use crate::settings::StrategyName;

/// How a run drives the strategy of a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drive {
    /// Independent executions, each with a strategy of its own made from its index, several
    /// at once; in epochs of doubling size if `epochs`, each execution's strategy learning
    /// the length of an execution from the epochs before (PCT's `k`).
    Independent {
        /// Whether in epochs.
        epochs: bool,
    },
    /// One strategy searches through every execution, one after another, until it has
    /// explored everything: no cap on executions unless one is set, the reduction applies,
    /// a thread that repeats a spin is held back (`fair_spins`), each thread ends at most
    /// one wait early per execution; and its schedules replay under the same rules.
    Search,
    /// One execution follows a recorded schedule (a replay, or a look again at a stored
    /// failure); a user does not choose it.
    Follow,
}

/// One strategy's row of [`LISTED`].
#[derive(Debug)]
pub(crate) struct Listing {
    /// Its name (a user's choice: as `StrategyKind::name` gives it).
    name: StrategyName,
    drive: Drive,
    /// For a strategy a user chooses, its maker (the function beside it in its file).
    maker: Option<Make>,
}

/// Every strategy, one row each.
const LISTED: &[Listing] = &[
    Listing {
        name: StrategyName::RANDOM,
        drive: Drive::Independent { epochs: false },
        maker: Some(random::make),
    },
    Listing {
        name: StrategyName::PCT,
        drive: Drive::Independent { epochs: true },
        maker: Some(pct::make),
    },
    Listing {
        name: StrategyName::DFS,
        drive: Drive::Search,
        maker: Some(dfs::make),
    },
    Listing {
        name: StrategyName::REPLAY,
        drive: Drive::Follow,
        maker: None,
    },
    Listing {
        name: StrategyName::PREFIX,
        drive: Drive::Follow,
        maker: None,
    },
];

/// The row of the strategy called `name`.
fn row(name: StrategyName) -> &'static Listing {
    LISTED
        .iter()
        .find(|r| r.name == name)
        .expect("every StrategyName has a row in LISTED")
}

impl StrategyName {
    /// How a run drives this strategy.
    pub fn drive(self) -> Drive {
        row(self).drive
    }

    /// Whether a run of this strategy is one search through every execution
    /// ([`Drive::Search`]).
    pub fn searches(self) -> bool {
        self.drive() == Drive::Search
    }

    /// The maker of this strategy, if a user can choose it.
    pub fn maker(self) -> Option<Make> {
        row(self).maker
    }

    /// The strategy called `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<StrategyName> {
        LISTED
            .iter()
            .find(|r| r.name.name() == name)
            .map(|r| r.name)
    }
}

#[cfg(test)]
mod tests {
    use super::LISTED;
    use crate::settings::{StrategyKind, StrategyName};

    #[test]
    fn every_strategy_name_reads_back_and_every_kind_has_a_maker() {
        for row in LISTED {
            assert_eq!(StrategyName::from_name(row.name.name()), Some(row.name));
        }
        let kinds = [
            StrategyKind::Random,
            StrategyKind::Pct { depth: 3 },
            StrategyKind::Dfs {
                max_preemptions: None,
            },
        ];
        for kind in kinds {
            assert!(kind.name().maker().is_some(), "{kind:?}");
        }
        assert_eq!(StrategyName::from_name("DFS"), None);
        assert_eq!(StrategyName::from_name(""), None);
        let dfs = StrategyKind::Dfs {
            max_preemptions: Some(2),
        };
        assert_eq!(dfs.name(), StrategyName::DFS);
        assert!(dfs.name().searches());
        assert_eq!(StrategyKind::Pct { depth: 3 }.name().name(), "pct");
        assert_eq!(StrategyName::REPLAY.maker().map(|m| m as usize), None);
    }
}
