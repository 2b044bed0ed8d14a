-- Drives `stagelint lsp` from a real Neovim (0.7 or newer) through the shipped configuration
-- (editors/neovim): diagnostics, an incremental edit, a completion and a go-to-definition, the
-- dry-run lenses, and a Last Light phase's prompt preview.
local bin = os.getenv("STAGELINT_BIN")
local file = os.getenv("STAGE_FILE")
local out = os.getenv("OUT_FILE")
local config_dir = os.getenv("STAGELINT_NVIM_CONFIG")
local lines = {}

package.path = config_dir .. "/lua/?.lua;" .. package.path
vim.cmd("filetype on")
require("stagelint").setup({ cmd = { bin, "lsp" } })

local function code_of(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
end

vim.cmd("edit " .. file)

local found = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
table.insert(lines, "found=" .. tostring(found))
table.insert(lines, "kind=" .. tostring(vim.b.stagelint_kind) .. ":" .. vim.bo.filetype)
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("%d:%d:%s", d.lnum, d.col, code_of(d)))
end

-- Fix `Raed` on line 4 (0-based 3) through the buffer, as typing would.
vim.api.nvim_buf_set_lines(0, 3, 4, false, { "allowedTools: [Read, \"😀\", Grep]" })
local cleared = vim.wait(20000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if code_of(d) == "sm/UnknownTool" and d.lnum == 3 and d.col == 29 then return false end
  end
  return true
end, 50)
table.insert(lines, "cleared=" .. tostring(cleared))
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("%d:%d:%s", d.lnum, d.col, code_of(d)))
end

-- Completion of stage ids inside `nextStages: [` (line 10, 0-based 9, after the bracket).
local uri = vim.uri_from_bufnr(0)
local completion = vim.lsp.buf_request_sync(0, "textDocument/completion", {
  textDocument = { uri = uri },
  position = { line = 10, character = 15 },
}, 10000)
for _, response in pairs(completion or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do
    table.insert(lines, "completion=" .. item.label)
  end
end

-- Go to definition of `review` in `nextStages: [review]`.
local definition = vim.lsp.buf_request_sync(0, "textDocument/definition", {
  textDocument = { uri = uri },
  position = { line = 10, character = 16 },
}, 10000)
for _, response in pairs(definition or {}) do
  for _, location in ipairs(response.result or {}) do
    table.insert(lines, string.format("definition=%s:%d:%d", vim.fn.fnamemodify(vim.uri_to_fname(location.uri), ":t"),
      location.range.start.line, location.range.start.character))
  end
end

-- The dry-run lens on review.md (it has review.cassette.yaml beside it), then its command.
vim.cmd("edit " .. os.getenv("REVIEW_FILE"))
local review_uri = vim.uri_from_bufnr(0)
vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
local lenses = vim.lsp.buf_request_sync(0, "textDocument/codeLens", { textDocument = { uri = review_uri } }, 10000)
for _, response in pairs(lenses or {}) do
  for _, lens in ipairs(response.result or {}) do
    table.insert(lines, string.format("lens=%d:%s:%s", lens.range.start.line, lens.command.command, lens.command.title))
  end
end
-- Another server on the same buffer that also offers executeCommand: `:StagelintDryRun` must
-- ask stagelint alone, so this one never answers with an error.
local other = os.getenv("OTHER_SERVER")
if other then
  local id = vim.lsp.start_client({ name = "other", cmd = { "python3", other }, root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(0, id)
  vim.wait(10000, function()
    local client = vim.lsp.get_client_by_id(id)
    return client ~= nil and client.initialized == true
  end, 50)
end
local errors = {}
local notify = vim.notify
vim.notify = function(message, level, ...)
  if level == vim.log.levels.ERROR then
    table.insert(errors, message)
  end
  return notify(message, level, ...)
end
vim.cmd("StagelintDryRun")
local ran = vim.wait(20000, function() return vim.g.stagelint_dry_run ~= nil end, 50)
vim.wait(500, function() return false end, 50)
table.insert(lines, "dry-run=" .. tostring(ran) .. ":" .. tostring(vim.g.stagelint_dry_run))
table.insert(lines, "dry-run-errors=" .. table.concat(errors, "|"))

-- TOML: stagelint.toml attaches the server (a broken one shows its finding); other TOML does not.
vim.cmd("edit " .. os.getenv("OTHER_TOML"))
vim.wait(1000, function() return false end, 50)
table.insert(lines, "other-toml-clients=" .. #vim.lsp.buf_get_clients(0))
vim.cmd("edit " .. os.getenv("CONFIG_FILE"))
vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("config=%d:%d:%s", d.lnum, d.col, code_of(d)))
end

-- TypeScript: an @bastani/atomic workflow attaches the server and shows its findings; other
-- TypeScript does not attach it.
vim.cmd("edit " .. os.getenv("OTHER_TS"))
vim.wait(1000, function() return false end, 50)
table.insert(lines, "other-ts-clients=" .. #vim.lsp.buf_get_clients(0))
vim.cmd("edit " .. os.getenv("ATOMIC_FILE"))
vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("atomic=%d:%d:%s", d.lnum, d.col, code_of(d)))
end

-- A stage in `sub dir/` (a space in the path): it joins the same server, and with two scenario
-- cassettes `:StagelintDryRun` lets the user pick one (here: the first offered, check-bad).
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("SCENARIO_STAGE")))
local attached = vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
table.insert(lines, "scenario-attached=" .. tostring(attached))
local ours = {}
for _, client in ipairs(vim.lsp.get_active_clients()) do
  if client.name == "stagelint" then
    table.insert(ours, client)
  end
end
table.insert(lines, "stagelint-clients=" .. #ours)
for _, client in ipairs(ours) do
  table.insert(lines, "root=" .. tostring(client.config.root_dir))
end
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item(item))
  end
  table.insert(lines, "choices=" .. table.concat(titles, "|"))
  on_choice(items[1], 1)
end
vim.g.stagelint_dry_run = nil
vim.cmd("StagelintDryRun")
local picked = vim.wait(20000, function() return vim.g.stagelint_dry_run ~= nil end, 50)
table.insert(lines, "scenario-dry-run=" .. tostring(picked) .. ":" .. tostring(vim.g.stagelint_dry_run))

-- A climpt agent (examples/climpt's fixer): the registry's lenses, on its entry and on each step
-- its cassette reaches, and `:StagelintDryRun` on a step's line runs that step's lens.
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("CLIMPT_REGISTRY")))
vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
local registry_uri = vim.uri_from_bufnr(0)
local registry_lenses = {}
-- The server may still be reading the project: ask again until the lenses come (no vim.wait
-- around the request, which waits itself).
for _ = 1, 40 do
  local answer = vim.lsp.buf_request_sync(0, "textDocument/codeLens", { textDocument = { uri = registry_uri } }, 10000)
  for _, response in pairs(answer or {}) do
    for _, lens in ipairs(response.result or {}) do
      table.insert(registry_lenses, lens)
    end
  end
  if #registry_lenses > 0 then
    break
  end
  vim.wait(250, function() return false end, 50)
end
for _, lens in ipairs(registry_lenses) do
  local step = lens.command.arguments and lens.command.arguments[3] or ""
  table.insert(lines, string.format("climpt-lens=%d:%s:%s:%s", lens.range.start.line, lens.command.command,
    lens.command.title, tostring(step)))
end
local registry_buf = vim.api.nvim_get_current_buf()
for _, at in ipairs({ "entryStepMapping", "\"continuation.issue\": {" }) do
  -- The report of the run before opened in a split: back to the registry.
  if vim.api.nvim_get_current_buf() ~= registry_buf then
    vim.cmd("close")
  end
  local line = vim.fn.search(at, "w")
  vim.g.stagelint_dry_run = nil
  vim.cmd("StagelintDryRun")
  local done = vim.wait(20000, function() return vim.g.stagelint_dry_run ~= nil end, 50)
  table.insert(lines, string.format("climpt-dry-run=%d:%s:%s", line, tostring(done), tostring(vim.g.stagelint_dry_run)))
end

-- A Last Light workflow: its dry-run lens on `name:` runs through `:StagelintDryRun`, and
-- `:StagelintPreview` on a phase opens its prompt, written again when the prompt is edited.
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("WORKFLOW_FILE")))
vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
local workflow_uri = vim.uri_from_bufnr(0)
local workflow_lenses = {}
vim.wait(20000, function()
  local got = vim.lsp.buf_request_sync(0, "textDocument/codeLens", { textDocument = { uri = workflow_uri } }, 10000)
  workflow_lenses = {}
  for _, response in pairs(got or {}) do
    for _, lens in ipairs(response.result or {}) do
      table.insert(workflow_lenses, lens)
    end
  end
  return #workflow_lenses > 0
end, 200)
for _, lens in ipairs(workflow_lenses) do
  table.insert(lines, string.format("workflow-lens=%d:%s:%s", lens.range.start.line, lens.command.command, lens.command.title))
end
vim.g.stagelint_dry_run = nil
vim.cmd("StagelintDryRun")
local workflow_ran = vim.wait(20000, function() return vim.g.stagelint_dry_run ~= nil end, 50)
table.insert(lines, "workflow-dry-run=" .. tostring(workflow_ran) .. ":" .. tostring(vim.g.stagelint_dry_run))
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("WORKFLOW_FILE")))
vim.api.nvim_win_set_cursor(0, { 5, 0 })
vim.g.stagelint_preview = nil
vim.cmd("StagelintPreview")
local previewed = vim.wait(20000, function() return vim.g.stagelint_preview ~= nil end, 50)
local preview = tostring(vim.g.stagelint_preview)
table.insert(lines, "preview=" .. tostring(previewed) .. ":" .. vim.fn.fnamemodify(preview, ":e"))
table.insert(lines, "preview-readonly=" .. tostring(vim.bo.readonly))
for _, text in ipairs(vim.fn.readfile(preview)) do
  if text:find("Plan", 1, true) then
    table.insert(lines, "preview-text=" .. text)
  end
end
-- Edit the prompt in its buffer (unsaved): the preview file follows.
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("WORKFLOW_PROMPT")))
vim.wait(20000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
vim.api.nvim_buf_set_lines(0, 0, 1, false, { "Plan again: {{issueTitle}}" })
local followed = vim.wait(20000, function()
  for _, text in ipairs(vim.fn.readfile(preview)) do
    if text:find("Plan again", 1, true) then return true end
  end
  return false
end, 100)
table.insert(lines, "preview-followed=" .. tostring(followed))

vim.fn.writefile(lines, out)
vim.cmd("qa!")
