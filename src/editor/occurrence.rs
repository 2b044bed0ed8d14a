//! One name written in several places: where it is defined and where it is used. A family says
//! where its names are (a stage id, a step id, a phase name) as [`Occurrence`]s; definitions,
//! references and rename are answered from them here, one way for every family: each place
//! once, in the order the family found them, and a rename's edits de-duplicated by (file, span)
//! and sorted by file, then span.

use crate::diagnostic::{Edit, FileId};
use crate::source::Span;

use super::{Cursor, RenameResult, Target};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Where the name is declared (a stage's `id`, a step's key, a phase's `name`).
    Definition,
    /// Anything else that names it.
    Reference,
}

/// A place that writes a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub name: String,
    pub file: FileId,
    /// The name's text, without quotes: what a rename replaces.
    pub span: Span,
    /// Where the cursor finds it (quotes included); `span` or wider.
    pub hit: Span,
    pub role: Role,
}

impl Occurrence {
    pub fn target(&self) -> Target {
        Target { file: self.file, span: self.span }
    }

    pub fn is_definition(&self) -> bool {
        self.role == Role::Definition
    }
}

/// The first occurrence under the cursor.
pub fn at(all: &[Occurrence], cursor: Cursor) -> Option<&Occurrence> {
    all.iter().find(|o| o.file == cursor.file && o.hit.contains(cursor.offset))
}

/// The targets of the occurrences of `name` that `keep`, each place once, in their order.
fn targets(all: &[Occurrence], name: &str, keep: impl Fn(&Occurrence) -> bool) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for target in all.iter().filter(|o| o.name == name && keep(o)).map(Occurrence::target) {
        if !out.contains(&target) {
            out.push(target);
        }
    }
    out
}

/// Where the name of `here` is defined.
pub fn definitions(all: &[Occurrence], here: &Occurrence) -> Vec<Target> {
    targets(all, &here.name, Occurrence::is_definition)
}

/// Where the name of `here` is used, declarations left out (a client that wants them too asks
/// [`definitions`] as well, as the server does).
pub fn references(all: &[Occurrence], here: &Occurrence) -> Vec<Target> {
    targets(all, &here.name, |o| !o.is_definition())
}

/// The span a rename from the cursor would change, or `refusal` when no name is under it.
pub fn prepare_rename(here: Option<&Occurrence>, refusal: impl FnOnce() -> String) -> Result<Span, String> {
    here.map(|o| o.span).ok_or_else(refusal)
}

/// Renames every occurrence of the name of `here` to `new_name`, once `check` (the family's rule
/// for its names: the syntax, a name already taken) accepts it.
pub fn rename(
    all: &[Occurrence],
    here: &Occurrence,
    new_name: &str,
    check: impl FnOnce(&str) -> Result<(), String>,
) -> RenameResult {
    check(new_name)?;
    let mut edits: Vec<(FileId, Edit)> = all
        .iter()
        .filter(|o| o.name == here.name)
        .map(|o| (o.file, Edit { span: o.span, replacement: new_name.to_string() }))
        .collect();
    edits.sort_by_key(|(file, edit)| (*file, edit.span));
    edits.dedup_by_key(|(file, edit)| (*file, edit.span));
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occurrence(file: u32, start: usize, name: &str, role: Role) -> Occurrence {
        let span = Span::new(start, start + name.len());
        Occurrence { name: name.into(), file: FileId(file), span, hit: Span::new(start - 1, span.end + 1), role }
    }

    /// `plan` defined in file 1 and used in files 0 and 1, with one place found twice (an alias),
    /// and `other` in between.
    fn all() -> Vec<Occurrence> {
        vec![
            occurrence(1, 40, "plan", Role::Reference),
            occurrence(1, 10, "plan", Role::Definition),
            occurrence(0, 5, "other", Role::Definition),
            occurrence(0, 30, "plan", Role::Reference),
            occurrence(1, 40, "plan", Role::Reference),
        ]
    }

    #[test]
    fn the_occurrence_under_the_cursor_is_found_by_its_hit_in_its_file() {
        let all = all();
        assert_eq!(at(&all, Cursor { file: FileId(1), offset: 9 }), Some(&all[1]), "the opening quote");
        assert_eq!(at(&all, Cursor { file: FileId(0), offset: 9 }).map(|o| o.name.as_str()), Some("other"));
        assert_eq!(at(&all, Cursor { file: FileId(0), offset: 20 }), None);
        assert_eq!(at(&all, Cursor { file: FileId(2), offset: 10 }), None, "another file");
    }

    #[test]
    fn definitions_and_references_list_each_place_once_in_order() {
        let all = all();
        let target = |file, start| Target { file: FileId(file), span: Span::new(start, start + 4) };
        assert_eq!(definitions(&all, &all[0]), vec![target(1, 10)]);
        assert_eq!(references(&all, &all[1]), vec![target(1, 40), target(0, 30)]);
        assert_eq!(definitions(&all, &all[2]), vec![Target { file: FileId(0), span: Span::new(5, 10) }]);
        assert_eq!(references(&all, &all[2]), Vec::new());
    }

    #[test]
    fn rename_edits_each_place_once_sorted_by_file_then_span() {
        let all = all();
        let edits = rename(&all, &all[3], "design", |_| Ok(())).expect("accepted");
        let places: Vec<(u32, usize)> = edits.iter().map(|(file, edit)| (file.0, edit.span.start)).collect();
        assert_eq!(places, vec![(0, 30), (1, 10), (1, 40)]);
        assert!(edits.iter().all(|(_, edit)| edit.replacement == "design"));
    }

    #[test]
    fn rename_refuses_what_the_family_check_refuses() {
        let all = all();
        let taken = |new: &str| match all.iter().any(|o| o.is_definition() && o.name == new) {
            true => Err(format!("`{new}` is taken")),
            false => Ok(()),
        };
        assert_eq!(rename(&all, &all[0], "other", taken), Err("`other` is taken".to_string()));
    }

    #[test]
    fn prepare_rename_gives_the_name_or_the_refusal() {
        let all = all();
        assert_eq!(prepare_rename(all.first(), || "unused".into()), Ok(Span::new(40, 44)));
        assert_eq!(prepare_rename(None, || "not a name".into()), Err("not a name".to_string()));
    }
}
