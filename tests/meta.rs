//! Invariants of the rule registry and the shipped examples.

mod common;

use std::collections::HashSet;
use std::path::PathBuf;

use stagelint::check::FAMILIES;
use stagelint::config::Config;
use stagelint::diagnostic::Severity;
use stagelint::families;

#[test]
fn codes_are_unique_and_well_formed() {
    let mut seen = HashSet::new();
    for rule in families::all_rules() {
        assert!(seen.insert(rule.code), "duplicate code {}", rule.code);
        let (family, name) = rule.code.split_once('/').expect("family/Name");
        assert!(FAMILIES.iter().any(|f| f.name() == family), "{} has an unknown family", rule.code);
        // PascalCase, or climpt's own ids (`SR-VALID-003`, `R-B4`, `FLOW-OrphanStep`).
        assert!(name.chars().next().is_some_and(|c| c.is_ascii_uppercase()), "{} is not PascalCase", rule.code);
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{} has odd characters", rule.code);
        assert!(!name.ends_with('-') && !name.contains("--"), "{} has odd dashes", rule.code);
        for alias in rule.aliases {
            assert!(seen.insert(alias), "alias {alias} of {} is used twice", rule.code);
        }
    }
}

#[test]
fn every_rule_is_documented() {
    for rule in families::all_rules() {
        let doc = rule.doc;
        assert!(doc.starts_with(&format!("# {}\n", rule.code)), "{}: doc must start with `# {}`", rule.code, rule.code);
        for section in ["## What it does", "## Why is this bad?", "## Example", "## Use instead"] {
            assert!(doc.contains(section), "{}: doc lacks `{section}`", rule.code);
        }
        let summary = rule.summary();
        assert!(!summary.is_empty() && !summary.ends_with('.'), "{}: summary `{summary}`", rule.code);
        assert!(!doc.contains("TODO"), "{}: doc is unfinished", rule.code);
    }
}

#[test]
fn broken_example_shows_every_rule() {
    let config = Config::defaults(&PathBuf::from("examples/broken"));
    let (_, diagnostics) = common::check_with(&[PathBuf::from("examples/broken")], config);
    let fired: HashSet<&str> = diagnostics.iter().map(|d| d.code).collect();
    let missing: Vec<&str> = families::all_rules()
        .filter(|r| matches!(r.family(), "sm" | "stagelint"))
        .map(|r| r.code)
        // A broken config stops the CLI with exit code 2, so the example cannot hold one; its
        // fixture and the language-server tests show it.
        .filter(|c| *c != "stagelint/InvalidConfig")
        // A baseline belongs to a repository that adopted stagelint with its findings, not to
        // the example of every mistake (whose findings it would hide); its fixture and
        // tests/baseline.rs show it.
        .filter(|c| *c != "stagelint/BaselineStale")
        .filter(|c| !fired.contains(c))
        .collect();
    assert!(missing.is_empty(), "examples/broken does not show: {missing:?}");
}

#[test]
fn clean_climpt_example_has_no_finding_at_all() {
    let root = PathBuf::from("examples/climpt");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    assert!(diagnostics.is_empty(), "{}", common::render_full(&workspace, &diagnostics));
    assert!(workspace.files().iter().any(|f| f.kind == stagelint::workspace::FileKind::StepsRegistry));
}

#[test]
fn clean_example_has_no_finding_at_all() {
    let config = Config::defaults(&PathBuf::from("examples/code-review"));
    let (workspace, diagnostics) = common::check_with(&[PathBuf::from("examples/code-review")], config);
    assert!(diagnostics.is_empty(), "{}", common::render_full(&workspace, &diagnostics));
    // Six stage and machine files, and two cassettes (replayed by the check).
    assert_eq!(workspace.files().len(), 8);
}

#[test]
fn severities_match_the_issue_table() {
    let expect = |code: &str, severity: Severity| {
        assert_eq!(families::rule(code).map(|r| r.severity), Some(severity), "{code}");
    };
    expect("sm/UnknownField", Severity::Hint);
    expect("sm/CompletionToolNotMentioned", Severity::Hint);
    expect("sm/PlaceholderDialect", Severity::Warning);
    expect("sm/UnreachableStage", Severity::Warning);
    expect("sm/UpstreamEmpty", Severity::Warning);
    expect("sm/UpstreamFieldUnknown", Severity::Warning);
    expect("sm/UpstreamIndexOutOfRange", Severity::Error);
    expect("sm/StageJoinDangling", Severity::Error);
}

#[test]
fn shipped_schemas_are_valid_json_schemas() {
    for entry in std::fs::read_dir("schemas").expect("schemas/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).expect("readable");
            let schema: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert!(jsonschema::meta::is_valid(&schema), "{} is not a valid JSON Schema", path.display());
        }
    }
}

#[test]
fn stage_schema_accepts_the_clean_example_frontmatter() {
    use stagelint::source::{frontmatter, yaml};
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/stage-frontmatter.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    for entry in std::fs::read_dir("examples/code-review").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).unwrap();
            let fm = frontmatter::split(&text).unwrap();
            let node = yaml::parse(&text[fm.yaml.start..fm.yaml.end]).root.unwrap();
            let errors: Vec<String> = validator.iter_errors(&node.to_json()).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        }
    }
}

/// The README's rule table is generated from the registry; `UPDATE_README=1 cargo test` rewrites it.
#[test]
fn readme_rule_table_is_current() {
    let mut table = String::from("| code | default | fix | finds |\n|---|---|---|---|\n");
    for rule in families::all_rules() {
        let fix = if rule.fixable { "yes" } else { "" };
        table.push_str(&format!("| `{}` | {} | {fix} | {} |\n", rule.code, rule.severity.as_str(), rule.summary()));
    }
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let (start, end) = ("<!-- rules:start -->\n", "<!-- rules:end -->");
    let from = readme.find(start).expect("rules:start marker") + start.len();
    let to = readme.find(end).expect("rules:end marker");
    if readme[from..to] != table {
        if std::env::var_os("UPDATE_README").is_some() {
            std::fs::write("README.md", format!("{}{table}{}", &readme[..from], &readme[to..])).expect("write");
        } else {
            panic!("README rule table is stale; run `UPDATE_README=1 cargo test --test meta`.\nExpected:\n{table}");
        }
    }
}

/// The cassette files of `tests/fixtures/cassette/<Rule>/<case>/`, with their rule and case names.
fn fixture_cassettes() -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for rule in std::fs::read_dir("tests/fixtures/cassette").expect("cassette fixtures") {
        let rule = rule.expect("entry").path();
        for case in std::fs::read_dir(&rule).expect("rule dir") {
            let case = case.expect("entry").path();
            for file in std::fs::read_dir(&case).expect("case dir") {
                let path = file.expect("entry").path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                if stagelint::runtime::cassette::is_cassette_name(name) {
                    let names = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
                    out.push((names(&rule), names(&case), path));
                }
            }
        }
    }
    out.sort();
    out
}

/// Schema errors of a cassette file, read as stagelint reads it (YAML or JSON).
fn cassette_schema_errors(validator: &jsonschema::Validator, path: &std::path::Path) -> Vec<String> {
    use stagelint::source::{json, yaml};
    let text = std::fs::read_to_string(path).expect("readable");
    let parsed = if path.extension().is_some_and(|e| e == "json") { json::parse(&text) } else { yaml::parse(&text) };
    let Some(root) = parsed.root.filter(|_| parsed.errors.is_empty()) else { return vec!["does not parse".into()] };
    validator.iter_errors(&root.to_json()).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

#[test]
fn cassette_schema_accepts_clean_cassettes_and_rejects_malformed_ones() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/cassette.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    // Rules whose bad fixtures the schema alone must reject: they read the cassette and nothing else.
    const STRUCTURAL: [&str; 4] = ["UnknownKey", "InvalidVersion", "MalformedTurn", "InvalidValue"];
    let (mut accepted, mut rejected) = (0, 0);
    for (rule, case, path) in fixture_cassettes() {
        let errors = cassette_schema_errors(&validator, &path);
        if case.starts_with("ok") {
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            accepted += 1;
        } else if STRUCTURAL.contains(&rule.as_str()) {
            assert!(!errors.is_empty(), "{} is malformed but the schema accepts it", path.display());
            rejected += 1;
        }
    }
    assert!(accepted >= 16 && rejected >= 10, "accepted {accepted}, rejected {rejected}");
    // A JSON cassette and a machine cassette are cassettes too.
    let machine = serde_json::json!({
        "cassette": 1,
        "ctx": {"task": "t"},
        "stages": {"plan": {"attempts": [{"turns": [{"response": {"content": [
            {"toolCall": {"id": "c1", "name": "submit_plan", "args": {"steps": []}}}]}}]}]}}
    });
    assert!(validator.is_valid(&machine));
    for bad in [
        serde_json::json!({"cassette": 1, "stage": "plan", "stages": {}}),
        serde_json::json!({"cassette": 1, "stage": "plan", "attempts": [{"turns": [{"expect": {"branch": "steer"}}]}]}),
        serde_json::json!({"cassette": 1, "stage": "plan", "tools": {"Read": [{"args": {}}]}}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}

/// What the linter says is structurally broken in a cassette text: the reader's problems and
/// syntax errors that the schema can express.
fn linter_rejects(text: &str) -> Vec<String> {
    let (cassette, errors) = stagelint::runtime::cassette::read(text, false);
    use stagelint::registry::cassette::{InvalidValue, InvalidVersion, MalformedTurn, UnknownKey};
    let structural = [UnknownKey, InvalidVersion, MalformedTurn, InvalidValue];
    errors
        .into_iter()
        .map(|e| e.message)
        .chain(
            cassette
                .problems
                .into_iter()
                .filter(|p| structural.contains(&p.rule))
                .map(|p| format!("{}: {}", p.rule, p.message)),
        )
        .collect()
}

#[test]
fn the_linter_and_the_schema_reject_the_same_cassettes() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/cassette.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    let call = "{ toolCall: { id: c1, name: done, args: {} } }";
    let turn = |extra: &str| {
        format!(
            "cassette: 1\nstage: s\nattempts:\n  - attempt: 1\n    turns:\n      - response: {{ stop: tool_use, content: [ {call} ] }}\n{extra}"
        )
    };
    let cases: Vec<(&str, String, bool)> = vec![
        ("a minimal stage cassette", turn(""), true),
        (
            "expectations and fingerprints",
            turn(
                "        expect: { branch: completion, call: c1, errorAt: \"\" }\n        request: { system: \"sha256:00\", count: 0 }\n",
            ),
            true,
        ),
        (
            "a provider error",
            "cassette: 1\nstage: s\nattempts: [ { turns: [ { error: { class: ProviderTransient, code: 429 } } ] } ]\n"
                .into(),
            true,
        ),
        (
            "a machine cassette, one entry per execution",
            "cassette: 1\nstages:\n  s:\n    - { attempts: [] }\n    - { checkGate: skip }\n  t: { attempts: [] }\n"
                .into(),
            true,
        ),
        (
            "a result with its error flag",
            turn("        results: { c1: { content: x, isError: true }, c2: [1] }\n"),
            true,
        ),
        ("attempt 0", turn("").replace("attempt: 1", "attempt: 0"), false),
        ("a negative message count", turn("        request: { count: -1 }\n"), false),
        ("a digest that is not a string", turn("        request: { system: 42 }\n"), false),
        ("a verdict outside the enum", format!("{}expectResult: {{ verdict: success }}\n", turn("")), false),
        ("capHit not a boolean", format!("{}expectResult: {{ capHit: \"no\" }}\n", turn("")), false),
        ("attemptCount 0", format!("{}expectResult: {{ attemptCount: 0 }}\n", turn("")), false),
        ("a block with two keys", turn("").replace(call, "{ text: hi, toolCall: { id: c1, name: done } }"), false),
        ("a grant decision outside the enum", turn("        grant: { c1: allow }\n"), false),
        ("a stop reason outside the enum", turn("").replace("tool_use", "tool_call"), false),
        ("an interactor that is not a mapping", format!("interactor: deny\n{}", turn("")), false),
        ("no stages", "cassette: 1\nstages: {}\n".into(), false),
        ("an empty list of executions", "cassette: 1\nstages: { s: [] }\n".into(), false),
        ("a call id that is a list", turn("").replace("id: c1", "id: [1]"), false),
        ("argsRaw that is not a string", turn("").replace("args: {}", "argsRaw: 5"), false),
        ("args and argsRaw together", turn("").replace("args: {}", "args: {}, argsRaw: \"{}\""), false),
        ("an unknown outcome", turn("        expect: { branch: tool, call: c1, outcome: skipped }\n"), false),
        (
            "the invalidArguments outcome",
            turn("        expect: { branch: tool, call: c1, outcome: invalidArguments }\n"),
            true,
        ),
        (
            "anyArgs that is not a boolean",
            format!("tools: {{ Read: [ {{ args: {{}}, anyArgs: \"yes\", result: x }} ] }}\n{}", turn("")),
            false,
        ),
        (
            "anyArgs false without args",
            format!("tools: {{ Read: [ {{ anyArgs: false, result: x }} ] }}\n{}", turn("")),
            false,
        ),
        ("expectEnd that is not a mapping", turn("    expectEnd: done\n"), false),
        ("ctx.upstream that is not a list", format!("ctx: {{ upstream: 3 }}\n{}", turn("")), false),
        ("a provenance value that is not a string", format!("provenance: {{ model: 5 }}\n{}", turn("")), false),
        ("expect calls that is not a list", turn("        expect: { branch: batchRejected, calls: c1 }\n"), false),
        ("errorAt that is not a string", turn("        expect: { branch: parseFailure, errorAt: 5 }\n"), false),
        ("results that is not a mapping", turn("        results: x\n"), false),
        (
            "a result flag that is not a boolean",
            turn("        results: { c1: { content: x, isError: \"yes\" } }\n"),
            false,
        ),
        (
            "an error that is not a mapping",
            "cassette: 1\nstage: s\nattempts: [ { turns: [ { error: oops } ] } ]\n".into(),
            false,
        ),
        ("an empty stage id", turn("").replace("stage: s", "stage: \"\""), false),
        ("an unknown top-level key", format!("tapes: 1\n{}", turn("")), false),
        ("a list", "- cassette: 1\n".into(), false),
        ("an empty file", String::new(), false),
    ];
    for (what, text, valid) in cases {
        let linter = linter_rejects(&text);
        let parsed = stagelint::source::yaml::parse(&text);
        let json = parsed.root.as_ref().map_or(serde_json::Value::Null, |root| root.to_json());
        let schema_errors: Vec<String> =
            validator.iter_errors(&json).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert_eq!(linter.is_empty(), valid, "{what}: the linter says {linter:?}");
        assert_eq!(schema_errors.is_empty(), valid, "{what}: the schema says {schema_errors:?}");
    }
}

/// Every workflow cassette under `dir`, at any depth.
fn workflow_cassettes(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            workflow_cassettes(&path, out);
        } else if stagelint::runtime::cassette::is_cassette_name(&name)
            && std::fs::read_to_string(&path).is_ok_and(|t| t.lines().any(|l| l.starts_with("workflow:")))
        {
            out.push(path);
        }
    }
}

#[test]
fn the_workflow_cassette_schema_and_the_reader_agree() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/lastlight-cassette.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    // The shipped cassettes: the rule fixtures, the tests' and the example's.
    let mut shipped = Vec::new();
    for dir in ["tests/fixtures/cassette", "tests/lastlight", "examples/lastlight"] {
        workflow_cassettes(std::path::Path::new(dir), &mut shipped);
    }
    assert!(shipped.len() >= 12, "{shipped:?}");
    for path in &shipped {
        let errors = cassette_schema_errors(&validator, path);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
    let base = "cassette: 1\nworkflow: build\n";
    let cases: Vec<(&str, String, bool)> = vec![
        ("the least cassette", base.into(), true),
        (
            "a whole one",
            format!(
                "{base}engine: seed\ntrigger: {{ owner: o, repo: r, issueNumber: 4, issueLabels: [a], extra: {{ mode: scan }} }}\nserver: {{ approval: {{ g: true }}, models: {{ default: m }}, sandbox: docker, qaImage: false }}\ncontext: {{ branch: b }}\nexecutions:\n  plan: {{ output: p, expect: {{ promptContains: [a], promptOmits: b, verdict: APPROVED, blocked: false }} }}\n  loop_iter_1: [ {{ output: x, untilBash: 1 }}, {{ success: false, error: e, stopReason: unknown }} ]\ngates: {{ g: approve, h: [ reject, {{ reject: why }}, {{ reply: yes, sender: bob }}, {{ approve: true }} ] }}\nexpect: {{ status: paused, phases: {{ plan: ran }}, cycles: {{ loop: 2 }}, outputs: {{ x: 1 }}, error: boom }}\n"
            ),
            true,
        ),
        ("no workflow", "cassette: 1\n".into(), false),
        ("version 2", "cassette: 2\nworkflow: w\n".into(), false),
        ("an unknown key", format!("{base}tape: 1\n"), false),
        ("an unknown trigger key", format!("{base}trigger: {{ title: x }}\n"), false),
        ("a negative issue number", format!("{base}trigger: {{ issueNumber: -1 }}\n"), false),
        ("labels that are not a list", format!("{base}trigger: {{ issueLabels: bug }}\n"), false),
        ("an approval that is not a boolean", format!("{base}server: {{ approval: {{ g: yes }} }}\n"), false),
        ("an unknown sandbox", format!("{base}server: {{ sandbox: lxc }}\n"), false),
        ("an execution that is text", format!("{base}executions: {{ plan: done }}\n"), false),
        ("an unknown execution key", format!("{base}executions: {{ plan: {{ outptu: x }} }}\n"), false),
        ("an exit code out of range", format!("{base}executions: {{ plan: {{ untilBash: 256 }} }}\n"), false),
        (
            "an empty expected text",
            format!("{base}executions: {{ plan: {{ expect: {{ promptContains: '' }} }} }}\n"),
            false,
        ),
        (
            "a verdict outside the enum",
            format!("{base}executions: {{ plan: {{ expect: {{ verdict: OK }} }} }}\n"),
            false,
        ),
        ("an answer outside the enum", format!("{base}gates: {{ g: approved }}\n"), false),
        ("an answer with no answer", format!("{base}gates: {{ g: {{ sender: bob }} }}\n"), false),
        ("a rejection reason that is a list", format!("{base}gates: {{ g: {{ reject: [a] }} }}\n"), false),
        ("a status outside the enum", format!("{base}expect: {{ status: done }}\n"), false),
        ("an outcome outside the enum", format!("{base}expect: {{ phases: {{ plan: ok }} }}\n"), false),
        ("negative cycles", format!("{base}expect: {{ cycles: {{ loop: -1 }} }}\n"), false),
        ("an engine outside the enum", format!("{base}engine: v2\n"), false),
    ];
    for (what, text, valid) in cases {
        let read = stagelint::runtime::lastlight::cassette::read(&text, false);
        let parsed = stagelint::source::yaml::parse(&text);
        let json = parsed.root.as_ref().map_or(serde_json::Value::Null, |root| root.to_json());
        let schema_errors: Vec<String> =
            validator.iter_errors(&json).map(|e| format!("{}: {e}", e.instance_path())).collect();
        let problems: Vec<&str> = read.problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(problems.is_empty(), valid, "{what}: the reader says {problems:?}");
        assert_eq!(schema_errors.is_empty(), valid, "{what}: the schema says {schema_errors:?}");
    }
}

#[test]
fn cassette_schema_describes_every_property() {
    fn walk(node: &serde_json::Value, at: &str, missing: &mut Vec<String>) {
        match node {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    for (key, prop) in props {
                        if prop.get("$ref").is_none() && prop.get("description").is_none() {
                            missing.push(format!("{at}/properties/{key}"));
                        }
                    }
                }
                for (key, value) in map {
                    walk(value, &format!("{at}/{key}"), missing);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, at, missing)),
            _ => {}
        }
    }
    for file in ["schemas/cassette.schema.json", "schemas/lastlight-cassette.schema.json"] {
        let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let mut missing = Vec::new();
        walk(&schema, "", &mut missing);
        assert!(missing.is_empty(), "{file}: properties without a description: {missing:?}");
    }
}

/// `schemas/lastlight-workflow.schema.json` is generated from the family's field tables;
/// `UPDATE_SCHEMAS=1 cargo test --test meta` rewrites it.
#[test]
fn lastlight_schema_is_current_and_documents_every_field() {
    let generated = stagelint::families::lastlight::schema::json_schema();
    let text = format!("{}\n", serde_json::to_string_pretty(&generated).expect("serializable"));
    let path = "schemas/lastlight-workflow.schema.json";
    let shipped = std::fs::read_to_string(path).unwrap_or_default();
    if shipped != text {
        if std::env::var_os("UPDATE_SCHEMAS").is_some() {
            std::fs::write(path, &text).expect("write");
        } else {
            panic!("{path} is stale; run `UPDATE_SCHEMAS=1 cargo test --test meta`");
        }
    }
    fn walk(value: &serde_json::Value, at: &str, missing: &mut Vec<String>) {
        if let Some(properties) = value.get("properties").and_then(|p| p.as_object()) {
            for (key, property) in properties {
                if property.get("description").and_then(|d| d.as_str()).is_none_or(str::is_empty) {
                    missing.push(format!("{at}/{key}"));
                }
                walk(property, &format!("{at}/{key}"), missing);
            }
        }
        for key in ["items", "allOf", "oneOf"] {
            match value.get(key) {
                Some(serde_json::Value::Array(items)) => items.iter().for_each(|i| walk(i, at, missing)),
                Some(item) => walk(item, at, missing),
                None => {}
            }
        }
    }
    let mut missing = Vec::new();
    walk(&generated, "", &mut missing);
    assert!(missing.is_empty(), "fields without a description: {missing:?}");
}

#[test]
fn lastlight_schema_accepts_the_clean_example_and_the_corpus() {
    use stagelint::source::yaml;
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/lastlight-workflow.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    let mut checked = 0;
    for dir in ["examples/lastlight/workflows", "tests/corpus/lastlight/apps/server/workflows"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let node = yaml::parse(&std::fs::read_to_string(&path).unwrap()).root.unwrap();
                let errors: Vec<String> = validator.iter_errors(&node.to_json()).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 20);
    let typo = yaml::parse("name: x\nphases:\n  - name: a\n    depend_on: [b]\n").root.unwrap();
    assert!(!validator.is_valid(&typo.to_json()));
}

#[test]
fn clean_lastlight_example_has_no_finding_at_all() {
    let root = PathBuf::from("examples/lastlight");
    let config = Config::load(&root.join("stagelint.toml")).expect("the example's config");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), config);
    assert!(diagnostics.is_empty(), "{}", common::render_full(&workspace, &diagnostics));
    let kinds: HashSet<String> = workspace.files().iter().map(|f| format!("{:?}", f.kind)).collect();
    assert!(kinds.contains("Workflow") && kinds.contains("WorkflowPrompt") && kinds.contains("Skill"), "{kinds:?}");
}

#[test]
fn broken_lastlight_example_shows_most_rules() {
    let root = PathBuf::from("examples/broken/lastlight");
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let fired: HashSet<&str> = diagnostics.iter().filter(|d| d.family() == "lastlight").map(|d| d.code).collect();
    // YamlSyntax would hide the rest of its file; every other rule is shown.
    let missing: Vec<&str> = families::all_rules()
        .filter(|r| r.family() == "lastlight" && r.code != "lastlight/YamlSyntax")
        .map(|r| r.code)
        .filter(|c| !fired.contains(c))
        .collect();
    assert!(missing.is_empty(), "examples/broken/lastlight does not show: {missing:?}");
}

#[test]
fn clean_atomic_example_has_no_finding_at_all() {
    let root = PathBuf::from("examples/atomic");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    assert!(diagnostics.is_empty(), "{}", common::render_full(&workspace, &diagnostics));
    // A 0.9 workflow, its child in `lib/`, and a v0.5 workflow in a project pinning 0.5.
    let workflows =
        workspace.files().iter().filter(|f| f.kind == stagelint::workspace::FileKind::AtomicWorkflow).count();
    assert_eq!(workflows, 3);
    let notes = stagelint::families::Family::notes(&stagelint::families::atomic::Atomic, &workspace);
    assert!(
        notes.iter().any(|n| n.starts_with("atomic 0.9 assumed") && n.contains("@bastani/atomic ^0.9.15")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with("atomic 0.5 assumed") && n.contains("@bastani/atomic ^0.5.24")),
        "{notes:?}"
    );
}

#[test]
fn broken_atomic_example_shows_the_current_rules() {
    let root = PathBuf::from("examples/broken/atomic");
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let fired: HashSet<&str> = diagnostics.iter().map(|d| d.code).collect();
    for code in [
        "atomic/BuilderRemoved",
        "atomic/RemovedImport",
        "atomic/MissingOutputs",
        "atomic/SchemaMapShape",
        "atomic/UnknownOption",
        "atomic/InvalidOptionValue",
        "atomic/ConflictingOptions",
        "atomic/AmbiguousStageName",
        "atomic/ProseGate",
        "atomic/WorkflowByName",
        "atomic/SchemaStageReprompted",
        "atomic/UnknownContextMember",
        "atomic/StructuredWithoutSchema",
        "atomic/NonWorkflowExport",
        "atomic/NotDiscovered",
    ] {
        assert!(fired.contains(code), "examples/broken/atomic does not show {code}: {fired:?}");
    }
    assert!(diagnostics.iter().any(|d| d.severity == Severity::Error), "the example exits 1");
}

/// Small workflows, each clean or broken in one way the linter calls an error; the shipped
/// JSON Schema must agree: clean ones valid, broken ones invalid. (Not every error can be said
/// in JSON Schema, such as a duplicate phase name; those are not listed.)
#[rustfmt::skip]
const SCHEMA_CASES: &[(&str, bool, &str)] = &[
    ("linear", true, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n  - name: b\n    type: context\n"),
    ("skills", true, "name: w\nphases:\n  - name: a\n    skills: [s]\n"),
    ("cron", true, "kind: cron\nname: c\nschedule: \"0 3 * * *\"\nworkflow: t\n"),
    ("bash", true, "name: w\nphases:\n  - name: a\n    type: bash\n    command: ls\n"),
    ("script", true, "name: w\nphases:\n  - name: a\n    type: script\n    runtime: python\n    script: print(1)\n"),
    ("loop", true, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    loop:\n      max_cycles: 2\n      on_request_changes:\n        fix_prompt: prompts/p.md\n        re_review_prompt: prompts/p.md\n"),
    ("generic_loop", true, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    generic_loop:\n      max_iterations: 3\n      until_bash: \"npm test\"\n"),
    ("on_output", true, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    on_output:\n      contains_BLOCKED:\n        action: fail\n"),
    ("classification", true, "name: w\nclassification:\n  intent: build\n  description: builds\nphases:\n  - name: a\n    prompt: prompts/p.md\n"),
    ("no name", false, "phases:\n  - name: a\n    prompt: prompts/p.md\n"),
    ("no phases", false, "name: w\ndescription: forgot them\n"),
    ("empty phases", false, "name: w\nphases: []\n"),
    ("phase without name", false, "name: w\nphases:\n  - prompt: prompts/p.md\n"),
    ("no max_cycles", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    loop:\n      on_request_changes:\n        fix_prompt: prompts/p.md\n        re_review_prompt: prompts/p.md\n"),
    ("zero max_cycles", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    loop:\n      max_cycles: 0\n      on_request_changes:\n        fix_prompt: prompts/p.md\n        re_review_prompt: prompts/p.md\n"),
    ("no re_review_prompt", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    loop:\n      max_cycles: 2\n      on_request_changes:\n        fix_prompt: prompts/p.md\n"),
    ("no on_request_changes", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    loop:\n      max_cycles: 2\n"),
    ("no max_iterations", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    generic_loop:\n      until: \"output.contains('X')\"\n"),
    ("no until", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    generic_loop:\n      max_iterations: 3\n"),
    ("no action", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    on_output:\n      contains_BLOCKED:\n        message: stop\n"),
    ("empty skills", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    skills: []\n"),
    ("skill and skills", false, "name: w\nphases:\n  - name: a\n    skill: s\n    skills: [s]\n"),
    ("no prompt or skill", false, "name: w\nphases:\n  - name: a\n    label: A\n"),
    ("bash without command", false, "name: w\nphases:\n  - name: a\n    type: bash\n"),
    ("script without script", false, "name: w\nphases:\n  - name: a\n    type: script\n"),
    ("command on agent", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    command: ls\n"),
    ("runtime on bash", false, "name: w\nphases:\n  - name: a\n    type: bash\n    command: ls\n    runtime: js\n"),
    ("script on agent", false, "name: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n    script: x\n"),
    ("bad type", false, "name: w\nphases:\n  - name: a\n    type: agnet\n    prompt: prompts/p.md\n"),
    ("reserved intent", false, "name: w\nclassification:\n  intent: approve\n  description: x\nphases:\n  - name: a\n    prompt: prompts/p.md\n"),
    ("cron without schedule", false, "kind: cron\nname: c\nworkflow: t\n"),
    ("cron without kind", false, "name: c\nschedule: \"0 3 * * *\"\nworkflow: t\n"),
    ("cron without workflow", false, "kind: cron\nname: c\nschedule: \"0 3 * * *\"\n"),
];

#[test]
fn lastlight_schema_agrees_with_the_linter() {
    use stagelint::source::yaml;
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/lastlight-workflow.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    let mut disagreements = Vec::new();
    for (name, clean, text) in SCHEMA_CASES {
        let valid = validator.is_valid(&yaml::parse(text).root.expect("a document").to_json());
        // The linter on the same file, with a prompt, a skill and the workflow a cron runs.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let files = [
            ("workflows/wf.yaml", *text),
            ("workflows/t.yaml", "name: t\nphases:\n  - name: a\n    prompt: prompts/p.md\n"),
            ("workflows/prompts/p.md", "Review. Answer `VERDICT: APPROVED` or `VERDICT: REQUEST_CHANGES`.\n"),
            ("skills/s/SKILL.md", "---\nname: s\ndescription: a skill\n---\nDo it.\n"),
        ];
        for (path, body) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        let (workspace, diagnostics) = common::check_with(&[dir.path().to_path_buf()], Config::defaults(dir.path()));
        let errors: Vec<&str> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error && workspace.file(d.file).path.ends_with("workflows/wf.yaml"))
            .map(|d| d.code)
            .collect();
        if valid != *clean || errors.is_empty() != *clean {
            disagreements
                .push(format!("{name}: expected clean = {clean}; schema valid = {valid}, linter errors = {errors:?}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// A code that moved family resolves to its new rule everywhere a code is accepted, and the
/// old code is no rule of its own.
#[test]
fn renamed_codes_resolve_to_their_new_rule() {
    for (old, new) in stagelint::families::RENAMED {
        assert_eq!(stagelint::families::rule(old).map(|r| r.code), Some(*new));
        assert!(stagelint::families::all_rules().all(|r| r.code != *old), "{old} is still declared");
    }
}

/// The registry's tables and the families that implement them are the same list, in the same
/// order: a family's rules are the table the registry (and so `Diagnostic`, the config and
/// the renderers) knows.
#[test]
fn every_family_implements_its_registry_table() {
    let codes = |rules: &[stagelint::registry::RuleMeta]| rules.iter().map(|r| r.code).collect::<Vec<_>>();
    let families: Vec<(&str, Vec<&str>)> =
        stagelint::check::FAMILIES.iter().map(|f| (f.name(), codes(f.rules()))).collect();
    let tables: Vec<(&str, Vec<&str>)> =
        stagelint::registry::TABLES.iter().map(|(name, rules)| (*name, codes(rules))).collect();
    assert_eq!(families, tables);
}

/// The flow cassette schema (climpt) describes every property, accepts the climpt cassettes the
/// tests and the example replay, rejects what the reader rejects, and names the reader's keys.
#[test]
fn flow_cassette_schema_agrees_with_the_reader() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schemas/flow-cassette.schema.json").unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles offline");
    let mut clean: Vec<PathBuf> =
        std::fs::read_dir("tests/cassettes/climpt").unwrap().map(|e| e.unwrap().path()).collect();
    clean.push("examples/climpt/.agent/fixer/agent.cassette.yaml".into());
    for rule in ["OutputRejected", "FlowStopped", "UnknownAgent"] {
        clean.push(format!("tests/fixtures/cassette/{rule}/ok/.agent/fixer/agent.cassette.yaml").into());
    }
    for path in &clean {
        assert!(
            cassette_schema_errors(&validator, path).is_empty(),
            "{}: {:?}",
            path.display(),
            cassette_schema_errors(&validator, path)
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert!(stagelint::runtime::climpt::cassette::read(&text, false).problems.is_empty(), "{}", path.display());
    }
    for bad in [
        "cassette: 1\nagent: demo\niterations: []\nexpect: { outcome: done }\n",
        "cassette: 1\nagent: demo\niterations: [ { ouput: {} } ]\n",
        "cassette: 2\nagent: demo\niterations: []\n",
        "cassette: 1\niterations: []\n",
        "cassette: 1\nagent: demo\niterations: [ { validators: { git-clean: { exitCode: x } } } ]\n",
        "cassette: 1\nagent: demo\nmatch: { onDrift: sometimes }\niterations: []\n",
        "cassette: 1\nagent: demo\niterations: [ { request: { prompts: x } } ]\n",
    ] {
        let root = stagelint::source::yaml::parse(bad).root.unwrap().to_json();
        assert!(!validator.is_valid(&root), "the schema accepts {bad}");
        assert!(
            !stagelint::runtime::climpt::cassette::read(bad, false).problems.is_empty(),
            "the reader accepts {bad}"
        );
    }
    let keys = |pointer: &str| -> Vec<String> {
        let mut keys: Vec<String> =
            schema.pointer(pointer).and_then(|p| p.as_object()).unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let sorted = |list: &[&str]| -> Vec<String> {
        let mut list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        list.sort();
        list
    };
    use stagelint::runtime::climpt::cassette as reader;
    assert_eq!(keys("/properties"), sorted(&reader::TOP_KEYS));
    assert_eq!(keys("/$defs/iteration/properties"), sorted(&reader::ITERATION_KEYS));
    assert_eq!(keys("/$defs/iteration/properties/expect/properties"), sorted(&reader::ITERATION_EXPECT_KEYS));
    assert_eq!(keys("/properties/expect/properties"), sorted(&reader::RUN_EXPECT_KEYS));
    assert_eq!(keys("/$defs/iteration/properties/request/properties"), sorted(&reader::REQUEST_KEYS));
    assert_eq!(
        keys("/$defs/iteration/properties/validators/additionalProperties/properties"),
        sorted(&reader::VALIDATOR_KEYS)
    );
}
