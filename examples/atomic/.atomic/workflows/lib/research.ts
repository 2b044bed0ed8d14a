// A child workflow, kept in a subdirectory: discovery does not list it, `review-changes`
// runs it through `ctx.workflow(...)`.
import { workflow } from "@bastani/workflows";
import { Type } from "typebox";

export default workflow({
  name: "research",
  description: "Research a topic and write notes.",
  inputs: { topic: Type.String() },
  outputs: { notes: Type.String() },
  run: async (ctx) => {
    const found = await ctx.task("research", { prompt: `Research ${ctx.inputs.topic} and summarize it.` });
    return { notes: found.text };
  },
});
