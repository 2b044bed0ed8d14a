// A 0.9 workflow: scout the change, review it twice in parallel, gate on a schema-backed
// verdict, and hand the research to a child workflow.
import { workflow } from "@bastani/workflows";
import { Type } from "typebox";
import research from "./lib/research.js";

export default workflow({
  description: "Review a change: scout, two parallel reviews, a schema-backed verdict.",
  inputs: {
    target: Type.String({ description: "The path or branch to review." }),
    depth: Type.Union([Type.Literal("quick"), Type.Literal("full")], { default: "quick" }),
  },
  outputs: {
    verdict: Type.Union([Type.Literal("approve"), Type.Literal("revise")]),
    summary: Type.String({ description: "The synthesized review." }),
    research_notes: Type.Optional(Type.String()),
  },
  run: async (ctx) => {
    const scoutPath = ".atomic/workflows/runs/review-changes/scout.md";
    await ctx.task("scout", {
      prompt: `Map the code touched by ${ctx.inputs.target}.`,
      context: "fresh",
      output: scoutPath,
      outputMode: "file-only",
    });
    const [quality, runtime] = await ctx.parallel(
      [
        { name: "quality review", prompt: "Review the change's code quality.", reads: [scoutPath] },
        { name: "runtime review", prompt: "Review the change's runtime behaviour.", reads: [scoutPath] },
      ],
      { concurrency: 2 },
    );
    const gate = await ctx.task("verdict", {
      prompt: `Decide whether to approve.\n\n${quality.text}\n\n${runtime.text}`,
      schema: Type.Object({ approve: Type.Boolean(), summary: Type.String() }),
      model: "anthropic/claude-sonnet-4:high",
      fallbackModels: ["openai/gpt-5:medium"],
    });
    const decision = gate.structured as { approve: boolean; summary: string };
    if (ctx.inputs.depth === "full") {
      const child = await ctx.workflow(research, { inputs: { topic: String(ctx.inputs.target) } });
      if (child.exited === false) {
        return { verdict: decision.approve ? "approve" : "revise", summary: decision.summary, research_notes: child.outputs.notes };
      }
    }
    return { verdict: decision.approve ? "approve" : "revise", summary: decision.summary };
  },
});
