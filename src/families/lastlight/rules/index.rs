//! The workflows of a check by namespace and name, built once: duplicate names, crons and the
//! context crons pass look names up here instead of comparing every file with every other
//! (20,000 workflows took minutes).

use std::path::Path;

use crate::families::lastlight::model::WorkflowDoc;
use crate::util::FastMap;

#[derive(Default)]
pub(in crate::families::lastlight) struct Index<'d> {
    /// (namespace, is a cron, `name`) -> the files, in the order of `all`.
    names: FastMap<(&'d Path, bool, &'d str), Vec<usize>>,
    /// (namespace, file stem) of agent workflows: a cron's `workflow` may name the file.
    stems: FastMap<(&'d Path, &'d str), usize>,
    /// (namespace, workflow name) -> the crons that run it.
    crons: FastMap<(&'d Path, &'d str), Vec<usize>>,
    /// namespace -> its agent workflows that parsed, in the order of `all` (a cron naming
    /// none of them is told the nearest name among these).
    agents: FastMap<&'d Path, Vec<usize>>,
}

impl<'d> Index<'d> {
    pub fn new(all: &'d [WorkflowDoc]) -> Index<'d> {
        let mut index = Index::default();
        // Room for every workflow up front: growing rehashes every key seen so far.
        index.names.reserve(all.len());
        index.stems.reserve(all.len());
        for (i, doc) in all.iter().enumerate() {
            let namespace = doc.prompt_base();
            let cron = doc.is_cron();
            if let Some(name) = doc.name() {
                index.names.entry((namespace, cron, name)).or_default().push(i);
            }
            if cron {
                if let Some(target) = doc.get("workflow").and_then(|n| n.as_str()) {
                    index.crons.entry((namespace, target)).or_default().push(i);
                }
            } else if doc.root.is_some() {
                if let Some(stem) = doc.file.path.file_stem().and_then(|s| s.to_str()) {
                    index.stems.entry((namespace, stem)).or_insert(i);
                }
                index.agents.entry(namespace).or_default().push(i);
            }
        }
        index
    }

    /// The files of `doc`'s namespace and kind named `name`.
    pub fn named<'s>(&'s self, doc: &WorkflowDoc<'s>, cron: bool, name: &'s str) -> &'s [usize] {
        // A key borrowed for less than `'d` is looked up in the map seen at that shorter
        // lifetime (the map is covariant in its keys), so lookups copy nothing.
        let names: &FastMap<(&'s Path, bool, &'s str), Vec<usize>> = &self.names;
        names.get(&(doc.prompt_base(), cron, name)).map_or(&[], Vec::as_slice)
    }

    /// Whether an agent workflow of `doc`'s namespace has `name` as its name or file stem.
    pub fn has_agent<'s>(&'s self, all: &[WorkflowDoc], doc: &WorkflowDoc<'s>, name: &'s str) -> bool {
        let stems: &FastMap<(&'s Path, &'s str), usize> = &self.stems;
        self.named(doc, false, name).iter().any(|&i| all[i].root.is_some())
            || stems.contains_key(&(doc.prompt_base(), name))
    }

    /// The agent workflows (that parsed) of `doc`'s namespace.
    pub fn agents<'a>(&self, all: &'a [WorkflowDoc<'a>], doc: &WorkflowDoc) -> Vec<&'a WorkflowDoc<'a>> {
        self.agents.get(doc.prompt_base()).map_or(Vec::new(), |found| found.iter().map(|&i| &all[i]).collect())
    }

    /// The crons of `doc`'s namespace that run the workflow `name`.
    pub fn crons_running<'s>(&'s self, doc: &WorkflowDoc<'s>, name: &'s str) -> &'s [usize] {
        let crons: &FastMap<(&'s Path, &'s str), Vec<usize>> = &self.crons;
        crons.get(&(doc.prompt_base(), name)).map_or(&[], Vec::as_slice)
    }
}
