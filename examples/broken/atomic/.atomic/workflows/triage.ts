// A 0.9 workflow with a mistake of each kind the atomic/ rules report.
import { workflow, Type } from "@bastani/workflows";

export const LABELS = ["bug", "feature"];

export default workflow({
  name: "triage",
  descripton: "Triage an issue.",
  inputs: [{ name: "issue", type: "string" }],
  worktreeFromInputs: { gitWorktreeDir: "worktree" },
  run: async (ctx) => {
    const scout = await ctx.task("scout", { promt: `Read issue ${ctx.inputs.issue}`, context: "clean" });
    await ctx.task("notes", { prompt: "Take notes.", outputMode: "file-only" });
    const [a] = await ctx.parallel(
      [
        { name: "classify", prompt: "Classify the issue.", reads: "issue.md" },
        { name: "classify", prompt: "Classify it again.", model: "openai/gpt-5:hihg" },
      ],
      { concurrency: 0, failFast: "false" },
    );
    if (/BUG/.test(a.text)) {
      await ctx.workflow("fix-bug", { inputs: {} });
    }
    for (const label of LABELS) {
      await ctx.task("label", { prompt: `Apply ${label}?` });
    }
    const gate = ctx.stage("gate", { schema: Type.Object({ ok: Type.Boolean() }) });
    await gate.prompt("Is the triage complete?");
    await gate.prompt("Are you sure?");
    const history = await ctx.transcript("scout");
    if (a.structured) {
      return ctx.exit({ status: "done", resumable: true, outputs: { sumary: "x" } });
    }
    return { summary: scout.text, history };
  },
});
