//! Generates synthetic state-machine workspaces for benchmarks: `machines` directories of
//! `stages_per_machine` stages each, with sequential chains, parallel fan-outs and joins.

use std::fmt::Write as _;
use std::path::Path;

pub fn generate(root: &Path, machines: usize, stages_per_machine: usize) {
    for m in 0..machines {
        let dir = root.join(format!("sm-{m:04}"));
        std::fs::create_dir_all(&dir).expect("create dir");
        std::fs::write(dir.join("sm.yaml"), "entry: stage-0\ncontext:\n  required: [task]\n  optional: [branch]\n")
            .expect("write sm.yaml");
        for s in 0..stages_per_machine {
            std::fs::write(dir.join(format!("stage-{s}.md")), stage(s, stages_per_machine)).expect("write stage");
        }
    }
}

/// Every fourth stage fans out to two siblings that join on the stage after them.
fn stage(s: usize, count: usize) -> String {
    let next = if s + 1 >= count {
        String::new()
    } else if s.is_multiple_of(4) && s + 3 < count {
        format!(
            "next:\n  nextStages: [stage-{}, stage-{}]\n  execution: parallel\n  join: stage-{}\n",
            s + 1,
            s + 2,
            s + 3
        )
    } else if s % 4 == 1 || s % 4 == 2 {
        String::new()
    } else {
        format!("next:\n  nextStages: [stage-{}]\n  execution: sequential\n", s + 1)
    };
    let upstream = match s % 4 {
        _ if s == 0 => String::new(),
        1 | 2 => String::new(),
        3 => "Sibling results: {{ctx.upstream[0].parsed.summary}} and {{ctx.upstream[1].parsed.items}}\n".into(),
        _ => "Previous summary: {{ctx.upstream[0].parsed.summary}}\n".into(),
    };
    let mut body = String::new();
    for i in 0..12 {
        let _ = writeln!(
            body,
            "Paragraph {i} of the instructions for stage {s}: work on {{{{ctx.task}}}} in branch {{{{ctx.branch}}}}, keep the change small and explain each step clearly."
        );
    }
    format!(
        "---\nid: stage-{s}\nname: Stage {s}\ndescription: Synthetic stage {s}\nallowedTools: [Read, Grep, Glob, Edit]\ncompletionTool: submit_{s}\ncompletionSchema:\n  type: object\n  required: [summary]\n  properties:\n    summary: {{ type: string }}\n    items:\n      type: array\n      items: {{ type: string }}\nretryPolicy:\n  maxAttempts: 2\n  backoff: none\nturnCap: 20\nresolutionPolicy: retry-later\ntags: [bench]\n{next}---\n\n# Stage {s} (`{{{{stage.id}}}}`)\n\n{upstream}{body}\nWhen done, call `submit_{s}` with a `summary`.\n"
    )
}
