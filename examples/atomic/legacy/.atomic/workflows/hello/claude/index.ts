// A v0.5 workflow in its own project: its package pins @bastani/atomic 0.5, so it is checked
// as v0.5 (stagelint decides the dialect per file, from imports and pins).
import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({ name: "hello", description: "Say hello." })
  .for<"claude">()
  .run(async (ctx) => {
    await ctx.stage({ name: "greet" }, {}, {}, async (s) => {
      await s.session.query("Say hello.");
      s.save(s.sessionId);
    });
  })
  .compile();
