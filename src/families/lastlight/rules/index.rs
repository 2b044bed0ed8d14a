//! The workflows of a check by namespace and name, built once: duplicate names, crons and the
//! context crons pass look names up here instead of comparing every file with every other
//! (20,000 workflows took minutes).

use std::collections::HashMap;
use std::path::PathBuf;

use crate::families::lastlight::model::WorkflowDoc;

#[derive(Default)]
pub(in crate::families::lastlight) struct Index {
    /// (namespace, is a cron, `name`) -> the files, in the order of `all`.
    names: HashMap<(PathBuf, bool, String), Vec<usize>>,
    /// (namespace, file stem) of agent workflows: a cron's `workflow` may name the file.
    stems: HashMap<(PathBuf, String), usize>,
    /// (namespace, workflow name) -> the crons that run it.
    crons: HashMap<(PathBuf, String), Vec<usize>>,
    /// namespace -> its agent workflows that parsed, in the order of `all` (a cron naming
    /// none of them is told the nearest name among these).
    agents: HashMap<PathBuf, Vec<usize>>,
}

impl Index {
    pub fn new(all: &[WorkflowDoc]) -> Index {
        let mut index = Index::default();
        for (i, doc) in all.iter().enumerate() {
            let namespace = doc.prompt_base().to_path_buf();
            let cron = doc.is_cron();
            if let Some(name) = doc.name() {
                index.names.entry((namespace.clone(), cron, name.to_string())).or_default().push(i);
            }
            if cron {
                if let Some(target) = doc.get("workflow").and_then(|n| n.as_str()) {
                    index.crons.entry((namespace, target.to_string())).or_default().push(i);
                }
            } else if doc.root.is_some() {
                if let Some(stem) = doc.file.path.file_stem().and_then(|s| s.to_str()) {
                    index.stems.entry((namespace.clone(), stem.to_string())).or_insert(i);
                }
                index.agents.entry(namespace).or_default().push(i);
            }
        }
        index
    }

    /// The files of `doc`'s namespace and kind named `name`.
    pub fn named(&self, doc: &WorkflowDoc, cron: bool, name: &str) -> &[usize] {
        let key = (doc.prompt_base().to_path_buf(), cron, name.to_string());
        self.names.get(&key).map_or(&[], Vec::as_slice)
    }

    /// Whether an agent workflow of `doc`'s namespace has `name` as its name or file stem.
    pub fn has_agent(&self, all: &[WorkflowDoc], doc: &WorkflowDoc, name: &str) -> bool {
        self.named(doc, false, name).iter().any(|&i| all[i].root.is_some())
            || self.stems.contains_key(&(doc.prompt_base().to_path_buf(), name.to_string()))
    }

    /// The agent workflows (that parsed) of `doc`'s namespace.
    pub fn agents<'a>(&self, all: &'a [WorkflowDoc<'a>], doc: &WorkflowDoc) -> Vec<&'a WorkflowDoc<'a>> {
        self.agents.get(doc.prompt_base()).map_or(Vec::new(), |found| found.iter().map(|&i| &all[i]).collect())
    }

    /// The crons of `doc`'s namespace that run the workflow `name`.
    pub fn crons_running(&self, doc: &WorkflowDoc, name: &str) -> &[usize] {
        self.crons.get(&(doc.prompt_base().to_path_buf(), name.to_string())).map_or(&[], Vec::as_slice)
    }
}
