//! Reading a `stagelint.toml` text into [`Config`] settings, collecting every problem (syntax,
//! unknown tables and keys, values of the wrong type, unknown rule codes, levels, dialects,
//! engines and bad globs) instead of stopping at the first, so one run shows them all.

use std::ops::Range;

use globset::{GlobSet, GlobSetBuilder};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::config::{Config, Excludes, LEVELS, Level, ReleaseSource, TABLES, TOP_KEYS};
use crate::diagnostic::Severity;
use crate::registry::releases::lastlight::{self as releases, ReleaseId, Target};
use crate::template::stage::Dialect;

/// A problem: the bytes it is about and what is wrong.
pub(super) type Problem = (Range<usize>, String);

type Value<'i> = Spanned<DeValue<'i>>;

/// Applies the settings of `text` to `config`; every problem found, in the order of the text.
pub(super) fn apply(text: &str, config: &mut Config) -> Vec<Problem> {
    let (document, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        // What the parser recovered is a guess; checking it would report knock-on problems.
        // The parser reports some errors twice and not in order of the text.
        let mut problems: Vec<Problem> =
            syntax.iter().map(|e| (e.span().unwrap_or(0..0), e.message().to_string())).collect();
        problems.sort_by_key(|(span, _)| (span.start, span.end));
        let mut unique: Vec<Problem> = Vec::new();
        for problem in problems {
            if !unique.contains(&problem) {
                unique.push(problem);
            }
        }
        return unique;
    }
    let mut problems = Vec::new();
    for (name, value) in document.get_ref().iter() {
        let name_text: &str = name.get_ref();
        if name_text == "baseline" {
            baseline(value, config, &mut problems);
            continue;
        }
        if !TABLES.iter().any(|(table, _)| *table == name_text) {
            let hint = hint(name_text, TABLES.iter().map(|(t, _)| *t).chain(TOP_KEYS.iter().map(|(k, _)| *k)));
            problems.push((name.span(), format!("unknown table `[{name_text}]`{hint}")));
            continue;
        }
        let DeValue::Table(table) = value.get_ref() else {
            problems.push((value.span(), format!("`{name_text}` must be a table (`[{name_text}]`)")));
            continue;
        };
        let mut reader = Reader { table: name_text, problems: &mut problems };
        match name_text {
            "rules" => reader.rules(table, config),
            "per-file-ignores" => reader.per_file_ignores(table, config),
            _ => reader.settings(table, config),
        }
    }
    problems.sort_by_key(|(span, _)| (span.start, span.end));
    problems
}

/// `baseline = "…"`: a relative path that stays inside the config's directory (a repository's
/// config must not make stagelint read elsewhere; `--baseline` names any file).
fn baseline(value: &Value<'_>, config: &mut Config, problems: &mut Vec<Problem>) {
    let DeValue::String(text) = value.get_ref() else {
        problems.push((value.span(), "`baseline` takes a path such as \"stagelint-baseline.json\"".into()));
        return;
    };
    let path = std::path::Path::new(text.as_ref());
    let inside = path.components().all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    if text.is_empty() || !inside {
        problems.push((
            value.span(),
            format!(
                "`baseline` is a path inside this file's directory, not `{text}` (give another file with `--baseline`)"
            ),
        ));
        return;
    }
    config.baseline = Some(config.root.join(path));
}

/// Reads the entries of one table, recording problems.
struct Reader<'p> {
    table: &'p str,
    problems: &'p mut Vec<Problem>,
}

impl Reader<'_> {
    /// A table of settings: each key is one of the table's keys in [`TABLES`].
    fn settings(&mut self, table: &DeTable<'_>, config: &mut Config) {
        let keys = TABLES.iter().find(|(t, _)| *t == self.table).map_or(&[][..], |(_, keys)| *keys);
        // Settings that replace a default are applied before the ones that add to it.
        let (mut replace, mut add) = (Vec::new(), Vec::new());
        // `[lastlight] release` and `engine` name the same thing: one of them.
        let mut release_keys = Vec::new();
        for (key, value) in table.iter() {
            let key_text: &str = key.get_ref();
            if !keys.iter().any(|(k, _)| *k == key_text) {
                let hint = hint(key_text, keys.iter().map(|(k, _)| *k));
                self.problems.push((key.span(), format!("unknown key `{key_text}` in `[{}]`{hint}", self.table)));
                continue;
            }
            match (self.table, key_text) {
                ("files", "stages") => config.stage_globs = self.globs(key_text, value),
                ("files", "workflows") => config.workflow_globs = self.globs(key_text, value),
                ("files", "exclude") => config.exclude = self.excludes(key_text, value, &config.root),
                ("files", "extend-exclude") => config.extend_exclude = self.excludes(key_text, value, &config.root),
                ("files", "force-exclude") => match value.get_ref() {
                    DeValue::Boolean(on) => config.force_exclude = *on,
                    other => self.wrong_type(key_text, value.span(), "true or false", other),
                },
                ("tools", "registered") => replace.push((key_text, value)),
                ("tools", "extra") => add.push((key_text, value)),
                ("sm", "placeholder-dialect") => {
                    let dialects = [("mustache", Dialect::Mustache), ("dollar", Dialect::Dollar)];
                    if let Some(dialect) = self.one_of(key_text, value, &dialects) {
                        config.dialect = dialect;
                    }
                }
                ("sm", "resolution-policies") => {
                    config.resolution_policies = self.strings(key_text, value).unwrap_or_default();
                }
                ("sm", "backoffs") => config.backoffs = self.strings(key_text, value).unwrap_or_default(),
                ("lastlight", "engine") => {
                    let engines = [("head", releases::NEWEST), ("seed", releases::SEED)];
                    if let Some(release) = self.one_of(key_text, value, &engines) {
                        config.lastlight.release = Target::exact(release);
                        config.lastlight.release_source = ReleaseSource::Configured;
                    }
                    release_keys.push(key.span());
                }
                ("lastlight", "release") => {
                    if let Some(release) = self.release(key_text, value) {
                        config.lastlight.release = Target::exact(release);
                        config.lastlight.release_source = ReleaseSource::Configured;
                    }
                    release_keys.push(key.span());
                }
                ("lastlight", "variables") => replace.push((key_text, value)),
                ("lastlight", "extra-variables") => add.push((key_text, value)),
                ("lastlight", "approval-gates") => {
                    config.lastlight.approval_gates = self.strings(key_text, value).unwrap_or_default();
                }
                ("steps", "validate-parity") => match value.get_ref() {
                    DeValue::Boolean(on) => config.validate_parity = *on,
                    other => self.wrong_type(key_text, value.span(), "true or false", other),
                },
                ("steps", "climpt-version") => match value.get_ref() {
                    DeValue::String(text) => match climpt_version(text) {
                        Ok(version) => config.climpt_version = Some(version),
                        Err(message) => self.problems.push((value.span(), message)),
                    },
                    other => self.wrong_type(key_text, value.span(), "a version string such as \"1.13.5\"", other),
                },
                ("dry-run", "cassettes") => {
                    let dirs = self.strings(key_text, value).unwrap_or_default();
                    config.cassette_dirs = dirs.iter().map(|dir| config.root.join(dir)).collect();
                }
                ("atomic", "sdk-version") => match value.get_ref() {
                    DeValue::String(text) => match crate::config::SdkVersion::parse(text) {
                        Some(version) => config.atomic.sdk_version = Some(version),
                        None => self.problems.push((
                            value.span(),
                            format!("`sdk-version` in `[atomic]` takes a version MAJOR.MINOR.PATCH[-TAG] such as \"0.5.24\", not `{text}`"),
                        )),
                    },
                    other => self.wrong_type(key_text, value.span(), "a version string such as \"0.5.24\"", other),
                },
                ("atomic", "agents") => config.atomic.agents = self.strings(key_text, value).unwrap_or_default(),
                ("atomic", "reserved-names") => {
                    config.atomic.reserved_names = self.strings(key_text, value).unwrap_or_default();
                }
                ("output", "docs-url") => match value.get_ref() {
                    DeValue::String(text) if is_url(text) => config.docs_url = Some(text.to_string()),
                    DeValue::String(text) => self.problems.push((
                        value.span(),
                        format!("`docs-url` in `[output]` takes an absolute URL such as \"https://example.com/stagelint/\" (a scheme, `://`, no spaces, no `?` query or `#` fragment: the page's path is put after it), not `{text}`"),
                    )),
                    other => self.wrong_type(key_text, value.span(), "a URL string", other),
                },
                // A key listed in TABLES that has no case here is a bug; a unit test reads each.
                _ => {}
            }
        }
        for (key, value) in replace.into_iter().chain(add) {
            let Some(names) = self.strings(key, value) else { continue };
            match key {
                "registered" => config.tools = names.into_iter().collect(),
                "extra" => config.tools.extend(names),
                "variables" => config.lastlight.variables = names,
                _ => config.lastlight.variables.extend(names),
            }
        }
        release_keys.sort_by_key(|span| span.start);
        if let [_, second, ..] = &release_keys[..] {
            let second = second.clone();
            let message = "`release` and `engine` in `[lastlight]` both name the Last Light release: keep one (`engine = \"head\"` is `release = \"head\"`, `engine = \"seed\"` is `release = \"seed\"`)";
            self.problems.push((second, message.to_string()));
        }
    }

    /// `[lastlight] release`: a release of the table, `head`, or a version.
    fn release(&mut self, key: &str, value: &Value<'_>) -> Option<ReleaseId> {
        let DeValue::String(text) = value.get_ref() else {
            self.wrong_type(key, value.span(), "a version string such as \"0.23\"", value.get_ref());
            return None;
        };
        let release = ReleaseId::parse(text);
        if release.is_none() {
            let message = format!(
                "unknown Last Light release `{text}`; expected a version such as \"0.23\" or \"0.10.2\", \"seed\" or \"head\" (`stagelint explain versions` lists them)"
            );
            self.problems.push((value.span(), message));
        }
        release
    }

    /// `[rules]`: a code or family, and a level.
    fn rules(&mut self, table: &DeTable<'_>, config: &mut Config) {
        for (code, level) in table.iter() {
            let code_ok = self.code(code.get_ref(), code.span());
            let level = match level.get_ref() {
                DeValue::String(name) => match name.as_ref() {
                    "off" => Some(Level::Off),
                    "on" => Some(Level::On),
                    other => {
                        let severity = Severity::parse(other).map(Level::Is);
                        if severity.is_none() {
                            let expected = quoted_list(&LEVELS);
                            let guess = crate::util::did_you_mean(other, LEVELS)
                                .map(|s| format!(" (did you mean `{s}`?)"))
                                .unwrap_or_default();
                            let message =
                                format!("unknown level `{other}`{guess}; expected {expected} (`warn` is `warning`)");
                            self.problems.push((level.span(), message));
                        }
                        severity
                    }
                },
                other => {
                    self.wrong_type(code.get_ref(), level.span(), &format!("one of {}", quoted_list(&LEVELS)), other);
                    None
                }
            };
            if let (true, Some(level)) = (code_ok, level) {
                config.rules.insert(primary_code(code.get_ref()), level);
            }
        }
    }

    /// `[per-file-ignores]`: a glob, and the codes or families it turns off.
    fn per_file_ignores(&mut self, table: &DeTable<'_>, config: &mut Config) {
        for (glob, codes) in table.iter() {
            let set = self.glob_set(&[(glob.get_ref(), glob.span())]);
            let Some(codes) = self.spanned_strings(glob.get_ref(), codes) else { continue };
            let codes: Vec<String> = codes
                .into_iter()
                .filter(|(code, span)| self.code(code, span.clone()))
                .map(|(code, _)| primary_code(&code))
                .collect();
            config.per_file_ignores.push((set, codes));
        }
    }

    /// Whether `code` names a rule or a family; records the problem when not.
    fn code(&mut self, code: &str, span: Range<usize>) -> bool {
        if crate::registry::rule(code).is_some() || crate::registry::is_family(code) {
            return true;
        }
        let hint = crate::registry::code_hint(code, true);
        self.problems.push((span, format!("unknown rule code or family `{code}`{hint}")));
        false
    }

    /// A string from a closed set.
    fn one_of<T: Copy>(&mut self, key: &str, value: &Value<'_>, known: &[(&str, T)]) -> Option<T> {
        let names: Vec<&str> = known.iter().map(|(name, _)| *name).collect();
        let DeValue::String(text) = value.get_ref() else {
            self.wrong_type(key, value.span(), &quoted_list(&names), value.get_ref());
            return None;
        };
        let found = known.iter().find(|(name, _)| *name == text.as_ref()).map(|(_, it)| *it);
        if found.is_none() {
            let what = if key == "engine" { "lastlight engine" } else { key };
            let message = format!("unknown {what} `{text}`; expected {}", quoted_list(&names));
            self.problems.push((value.span(), message));
        }
        found
    }

    fn strings(&mut self, key: &str, value: &Value<'_>) -> Option<Vec<String>> {
        self.spanned_strings(key, value).map(|list| list.into_iter().map(|(s, _)| s).collect())
    }

    /// A list of strings, each with its span; a non-string entry is a problem and left out.
    fn spanned_strings(&mut self, key: &str, value: &Value<'_>) -> Option<Vec<(String, Range<usize>)>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(key, value.span(), "a list of strings", value.get_ref());
            return None;
        };
        let mut out = Vec::new();
        for item in items.iter() {
            match item.get_ref() {
                DeValue::String(text) => out.push((text.to_string(), item.span())),
                other => {
                    let message = format!(
                        "`{key}` in `[{}]` takes a list of strings; this entry is {}",
                        self.table,
                        crate::util::article(other.type_str())
                    );
                    self.problems.push((item.span(), message));
                }
            }
        }
        Some(out)
    }

    fn globs(&mut self, key: &str, value: &Value<'_>) -> GlobSet {
        let globs = self.spanned_strings(key, value).unwrap_or_default();
        let globs: Vec<(&str, Range<usize>)> = globs.iter().map(|(g, span)| (g.as_str(), span.clone())).collect();
        self.glob_set(&globs)
    }

    /// Exclude patterns, anchored at `root`; each that does not parse is a problem.
    fn excludes(&mut self, key: &str, value: &Value<'_>, root: &std::path::Path) -> std::sync::Arc<Excludes> {
        let patterns = self.spanned_strings(key, value).unwrap_or_default();
        let patterns: Vec<(&str, Range<usize>)> = patterns.iter().map(|(p, span)| (p.as_str(), span.clone())).collect();
        let (excludes, problems) = Excludes::compile(&patterns, root);
        self.problems.extend(problems);
        std::sync::Arc::new(excludes)
    }

    /// The globs that parse; each that does not is a problem.
    fn glob_set(&mut self, globs: &[(&str, Range<usize>)]) -> GlobSet {
        let mut builder = GlobSetBuilder::new();
        for (glob, span) in globs {
            match globset::GlobBuilder::new(glob).literal_separator(true).build() {
                Ok(parsed) => {
                    builder.add(parsed);
                }
                Err(e) => self.problems.push((span.clone(), format!("bad glob: {e}"))),
            }
        }
        builder.build().unwrap_or_else(|_| GlobSet::empty())
    }

    fn wrong_type(&mut self, key: &str, span: Range<usize>, expected: &str, found: &DeValue<'_>) {
        let message =
            format!("`{key}` in `[{}]` takes {expected}, not {}", self.table, crate::util::article(found.type_str()));
        self.problems.push((span, message));
    }
}

/// `[steps] climpt-version`: a climpt version inside the releases stagelint models.
fn climpt_version(text: &str) -> Result<crate::config::ClimptVersion, String> {
    use crate::registry::releases::{CLIMPT, Version, climpt::ReleaseId};
    let Some(version) = Version::parse(text) else {
        return Err(format!(
            "`climpt-version` in `[steps]` takes a version MAJOR.MINOR.PATCH such as \"1.13.5\", not `{text}`"
        ));
    };
    match ReleaseId::containing(version) {
        Some(release) => Ok(crate::config::ClimptVersion { version, release }),
        None => Err(format!(
            "stagelint models climpt from {} on, not {version}; see `stagelint explain versions`",
            CLIMPT.releases[0].name
        )),
    }
}

/// `; did you mean `x`?`, or nothing.
fn hint<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    crate::util::did_you_mean(word, known).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
}

/// `"a", "b" or "c"`.
fn quoted_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

/// An absolute URL, as far as a link needs: a scheme, `://`, and no whitespace or control
/// characters (which would end the link in every output).
fn is_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else { return false };
    let scheme_ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    // The page's path is appended: a query or fragment would swallow it.
    let plain = !text.chars().any(|c| c.is_whitespace() || c.is_control() || c == '?' || c == '#');
    scheme_ok && !rest.is_empty() && plain
}

/// Aliases are stored under the code their rule reports.
fn primary_code(code: &str) -> String {
    crate::registry::rule(code).map_or_else(|| code.to_string(), |rule| rule.code.to_string())
}
