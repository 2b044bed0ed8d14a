// 0.8's builder: on atomic 0.9 and later this file no longer loads (`stagelint check --fix`
// converts it).
import { defineWorkflow, Type } from "@bastani/workflows";

export default defineWorkflow("review-changes")
  .description("Review a change.")
  .input("target", Type.String({ description: "What to review." }))
  .output("decision", Type.String())
  .run(async (ctx) => {
    const review = await ctx.task("review", { prompt: `Review ${ctx.inputs.target}` });
    return { decision: review.text };
  })
  .compile();
