//! The README's quick start, run: its files are written to a temporary directory, each command
//! it shows is run there, and the standard output must be what the README shows.

mod common;

use common::{repo, stagelint, stderr, stdout, write};

/// A step of the quick start: a file to write, or a command with the output shown for it.
enum Step {
    File { path: String, text: String },
    Command { args: Vec<String>, shown: String },
}

/// The steps between the quick start's markers: a fence whose info string has `file=PATH` is
/// that file; a `console` fence is `$ stagelint ARGS` and then its output.
fn quick_start() -> Vec<Step> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let (start, end) = ("<!-- quickstart:start -->\n", "<!-- quickstart:end -->");
    let from = readme.find(start).expect("quickstart:start marker") + start.len();
    let to = readme.find(end).expect("quickstart:end marker");
    let mut steps = Vec::new();
    let mut lines = readme[from..to].lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        if let Some(path) = info.split_whitespace().find_map(|word| word.strip_prefix("file=")) {
            steps.push(Step::File { path: path.to_string(), text: body.iter().map(|l| format!("{l}\n")).collect() });
        } else if info == "console" {
            let (command, shown) = body.split_first().expect("a command");
            let args = command.strip_prefix("$ stagelint ").expect("a stagelint command");
            let shown = shown.iter().map(|l| format!("{l}\n")).collect();
            steps.push(Step::Command { args: args.split_whitespace().map(String::from).collect(), shown });
        }
    }
    steps
}

#[test]
fn the_quick_start_examples_print_what_the_readme_shows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let steps = quick_start();
    let mut commands = 0;
    for step in &steps {
        match step {
            Step::File { path, text } => write(dir.path(), path, text),
            Step::Command { args, shown } => {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let output = stagelint(&args, dir.path());
                assert_eq!(&stdout(&output), shown, "stagelint {}\n{}", args.join(" "), stderr(&output));
                commands += 1;
            }
        }
    }
    // One example of each kind: a state machine, a climpt agent, Last Light, atomic.
    assert_eq!(commands, 4);
}
