//! The roles a stage runs in, as the runtime follows `next`: the owner of a list or a fan-out
//! decides what runs after it (stud-cli's `runSequential`/`runParallel` run the ids they are
//! given), so a stage's own `next` is followed only where the run continues from it: the
//! entry, the single or last stage of a sequential list, and a join. A non-last member of a
//! sequential list and a parallel sibling run, but their own `next` is never evaluated.
//!
//! The linter (`sm/UnreachableStage`, `sm/NextIgnored`) and the dry-run (`StageNext`, stages
//! that never ran) read the same roles, so they cannot disagree on what runs.

use std::collections::{BTreeMap, VecDeque};

/// A stage's `next`, as the roles need it.
#[derive(Clone, Debug)]
pub struct Plan<'s> {
    pub stages: Vec<&'s str>,
    pub parallel: bool,
    pub join: Option<&'s str>,
}

/// One way a stage runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role<'s> {
    Entry,
    /// The single or last stage of `owner`'s sequential `nextStages`.
    Successor {
        owner: &'s str,
    },
    /// A stage of `owner`'s sequential `nextStages` before `last`, which the run continues from.
    Member {
        owner: &'s str,
        last: &'s str,
    },
    /// One of `owner`'s parallel `nextStages`.
    Sibling {
        owner: &'s str,
        join: Option<&'s str>,
    },
    /// The join of `owner`'s fan-out.
    Join {
        owner: &'s str,
    },
}

impl<'s> Role<'s> {
    /// Whether the run continues from the stage's own `next` in this role.
    pub fn follows_next(self) -> bool {
        matches!(self, Role::Entry | Role::Successor { .. } | Role::Join { .. })
    }

    /// Why the stage's own `next` is not evaluated in this role (`None` when it is), naming the
    /// owner that decides instead.
    pub fn why_next_ignored(self, id: &str) -> Option<String> {
        match self {
            Role::Member { owner, last } => Some(format!(
                "`{id}` runs in `{owner}`'s sequential nextStages, before `{last}`: the list decides what runs next (`{last}`)"
            )),
            Role::Sibling { owner, join } => Some(format!(
                "`{id}` runs as a parallel sibling of `{owner}`'s fan-out, which decides what runs next ({})",
                join.map_or_else(|| "no join: the machine ends".to_string(), |j| format!("the join `{j}`"))
            )),
            _ => None,
        }
    }
}

/// Every stage the run can reach from `entry`, with each role it can run in (in the order
/// found, breadth first). `plan` gives a stage's `next` (`None`: no `next`, or no such stage).
pub fn roles<'s>(entry: &'s str, plan: impl Fn(&str) -> Option<Plan<'s>>) -> BTreeMap<&'s str, Vec<Role<'s>>> {
    let mut found: BTreeMap<&'s str, Vec<Role<'s>>> = BTreeMap::from([(entry, vec![Role::Entry])]);
    let mut followed = std::collections::BTreeSet::from([entry]);
    let mut pending = VecDeque::from([entry]);
    while let Some(owner) = pending.pop_front() {
        let Some(plan) = plan(owner) else { continue };
        let mut runs: Vec<(&'s str, Role<'s>)> = Vec::new();
        if plan.parallel {
            runs.extend(plan.stages.iter().map(|&s| (s, Role::Sibling { owner, join: plan.join })));
            runs.extend(plan.join.map(|j| (j, Role::Join { owner })));
        } else if let Some((&last, rest)) = plan.stages.split_last() {
            // A sequential plan never joins (its `join` is `sm/InvalidParallelPlan`).
            runs.extend(rest.iter().map(|&s| (s, Role::Member { owner, last })));
            runs.push((last, Role::Successor { owner }));
        }
        for (stage, role) in runs {
            let roles = found.entry(stage).or_default();
            if !roles.contains(&role) {
                roles.push(role);
            }
            if role.follows_next() && followed.insert(stage) {
                pending.push_back(stage);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plans<'s>(list: &[(&'s str, Plan<'s>)]) -> impl Fn(&str) -> Option<Plan<'s>> {
        let map: BTreeMap<&'s str, Plan<'s>> = list.iter().cloned().collect();
        move |id| map.get(id).cloned()
    }

    #[test]
    fn only_the_last_member_a_join_and_the_entry_follow_their_own_next() {
        let seq = |stages: Vec<&'static str>| Plan { stages, parallel: false, join: None };
        let par = |stages: Vec<&'static str>, join| Plan { stages, parallel: true, join };
        let found = roles(
            "start",
            plans(&[
                ("start", seq(vec!["s1", "s2"])),
                ("s1", seq(vec!["side"])),
                ("s2", par(vec!["p1", "p2"], Some("j"))),
                ("p1", seq(vec!["lost"])),
                ("j", seq(vec!["end"])),
            ]),
        );
        let reached: Vec<&str> = found.keys().copied().collect();
        assert_eq!(reached, ["end", "j", "p1", "p2", "s1", "s2", "start"]);
        assert_eq!(found["s1"], [Role::Member { owner: "start", last: "s2" }]);
        assert_eq!(found["p1"], [Role::Sibling { owner: "s2", join: Some("j") }]);
        assert!(found["j"][0].follows_next() && found["s2"][0].follows_next());
    }
}
