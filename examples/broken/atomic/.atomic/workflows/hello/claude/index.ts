// A 0.9 workflow left in v0.5's `<name>/<agent>/index.ts` layout: 0.9 never scans it.
import { workflow } from "@bastani/workflows";

export default workflow({
  description: "Say hello.",
  outputs: {},
  run: async (ctx) => {
    await ctx.task("hello", { prompt: "Say hello." });
    return {};
  },
});
