-- stagelint for Neovim: `require("stagelint").setup()` starts `stagelint lsp` for stage
-- definitions, state machines, climpt agents, Last Light and @bastani/atomic workflows.
-- Neovim 0.11+ uses vim.lsp.config/vim.lsp.enable; older versions (0.7+) start the client
-- from a FileType autocommand. One client per project (see root_dir).
local M = {}
local opts_open_report = true

-- `toml` is there for stagelint.toml alone, `typescript` for @bastani/atomic workflows under
-- `.atomic/workflows/` (and a package's `workflows/` or `workflow/` directory): other TOML and
-- TypeScript buffers do not start or attach the server.
M.filetypes = { "markdown", "yaml", "json", "toml", "typescript" }

local function is_config(bufnr)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
  return name == "stagelint.toml" or name == ".stagelint.toml"
end

local function is_atomic_workflow(bufnr)
  local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":p")
  return path:find("/.atomic/workflows/", 1, true) ~= nil
    or path:find("/workflows/", 1, true) ~= nil
    or path:find("/workflow/", 1, true) ~= nil
end

-- Whether the server should see this buffer: any of its filetypes, but of TOML files only ours
-- and of TypeScript files only atomic workflows.
local function wanted(bufnr)
  local filetype = vim.bo[bufnr].filetype
  if filetype == "toml" then
    return is_config(bufnr)
  end
  if filetype == "typescript" then
    return is_atomic_workflow(bufnr)
  end
  return true
end

local uv = vim.uv or vim.loop

-- The directory and its ancestors, nearest first. Plain string work: no Vim path syntax, so
-- spaces, commas and `;` in a path are just characters.
local function ancestors(dir)
  local out = {}
  while dir and dir ~= "" do
    table.insert(out, dir)
    local parent = dir:match("^(.*)/[^/]*$")
    if parent == "" then
      parent = "/"
    end
    if parent == nil or parent == dir then
      break
    end
    dir = parent
  end
  return out
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

-- The nearest ancestor holding one of `names` (0.8+: vim.fs.find; 0.7: a walk with fs_stat).
local function nearest(dir, names)
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(names, { path = dir, upward = true, limit = 1 })[1]
    return found and vim.fs.dirname(found)
  end
  for _, ancestor in ipairs(ancestors(dir)) do
    for _, name in ipairs(names) do
      if exists(ancestor .. "/" .. name) then
        return ancestor
      end
    end
  end
end

-- The outermost ancestor holding one of `names`.
local function outermost(dir, names)
  local found
  for _, ancestor in ipairs(ancestors(dir)) do
    for _, name in ipairs(names) do
      if exists((ancestor == "/" and "" or ancestor) .. "/" .. name) then
        found = ancestor
      end
    end
  end
  return found
end

local function stagelint_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = "stagelint" })
  end
  local out = {}
  for _, client in ipairs(vim.lsp.get_active_clients()) do
    if client.name == "stagelint" then
      table.insert(out, client)
    end
  end
  return out
end

local function contains(root, file)
  return root == "/" or file == root or file:sub(1, #root + 1) == root .. "/"
end

-- One server per project: the nearest ancestor with `.git`, else the outermost one with a
-- stagelint config, else the root of a stagelint server already running whose root holds the
-- file, else the file's directory.
local function root_dir(bufnr)
  local file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":p")
  local dir = file:match("^(.*)/[^/]*$")
  if dir == nil or dir == "" then
    dir = "/"
  end
  local git = nearest(dir, { ".git" })
  if git then
    return git
  end
  local config = outermost(dir, { "stagelint.toml", ".stagelint.toml" })
  if config then
    return config
  end
  local best
  for _, client in ipairs(stagelint_clients()) do
    local root = client.root_dir or (client.config and client.config.root_dir)
    if root and contains(root, file) and (best == nil or #root > #best) then
      best = root
    end
  end
  return best or dir
end

-- The stagelint client attached to the buffer (other servers must not get our command).
local function stagelint_client(bufnr)
  local clients
  if vim.lsp.get_clients then
    clients = vim.lsp.get_clients({ bufnr = bufnr, name = "stagelint" })
  else
    clients = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  end
  for _, client in ipairs(clients) do
    if client.name == "stagelint" then
      return client
    end
  end
end

local function requester(client)
  if vim.fn.has("nvim-0.11") == 1 then
    -- 0.11 deprecates the dot form.
    return function(...)
      return client:request(...)
    end
  end
  return client.request
end

local function failed(message)
  vim.g.stagelint_dry_run = "error: " .. message
  vim.notify("stagelint dry-run: " .. message, vim.log.levels.ERROR)
end

-- Runs one dry-run command (a lens's) and reports it: the summary goes to vim.notify and
-- g:stagelint_dry_run, and the report opens in a split.
local function execute(client, command)
  local params = { command = command.command, arguments = command.arguments }
  requester(client)("workspace/executeCommand", params, function(err, result)
    if err then
      failed(err.message or tostring(err))
      return
    end
    vim.g.stagelint_dry_run = result.summary
    local level = result.exitCode == 0 and vim.log.levels.INFO or vim.log.levels.WARN
    vim.notify(result.summary, level)
    if result.report and opts_open_report ~= false then
      vim.cmd("split " .. vim.fn.fnameescape(result.report))
    end
  end)
end

-- `:StagelintDryRun`: the dry-run lenses of the buffer (a stage, a state machine or a Last Light
-- workflow, one per cassette; a climpt registry, one on its entry and one on each step a cassette
-- reaches); the ones on the cursor's line when there are any; with several, vim.ui.select picks
-- one; with none, the server says why.
function M.dry_run(bufnr)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local client = stagelint_client(bufnr)
  if not client then
    failed("stagelint is not attached to this buffer")
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local fallback = { command = "stagelint.dryRun", arguments = { uri } }
  local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
  requester(client)("textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
    local commands, here = {}, {}
    for _, lens in ipairs((not err and lenses) or {}) do
      if lens.command and lens.command.command == "stagelint.dryRun" then
        table.insert(commands, lens.command)
        if lens.range and lens.range.start.line == cursor then
          table.insert(here, lens.command)
        end
      end
    end
    if #here > 0 then
      commands = here
    end
    if #commands == 0 then
      execute(client, fallback)
    elseif #commands == 1 then
      execute(client, commands[1])
    else
      vim.ui.select(commands, {
        prompt = "stagelint dry-run: which cassette?",
        format_item = function(command)
          return command.title
        end,
      }, function(choice)
        if choice then
          execute(client, choice)
        end
      end)
    end
  end, bufnr)
end

-- Previews are files the server writes again as their workflow is edited: reread them when
-- they are looked at (they are read-only).
local function watch_preview(path)
  local group = vim.api.nvim_create_augroup("stagelint_preview", { clear = false })
  vim.api.nvim_create_autocmd({ "BufEnter", "CursorHold", "FocusGained" }, {
    group = group,
    pattern = path,
    callback = function()
      vim.cmd("silent! checktime")
    end,
  })
end

-- `:StagelintPreview`: the "Preview prompt" lens of the phase under the cursor (the nearest
-- one above it), opened read-only in a split and kept up to date with the workflow's edits.
function M.preview(bufnr)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local client = stagelint_client(bufnr)
  if not client then
    vim.g.stagelint_preview = "error: stagelint is not attached to this buffer"
    vim.notify("stagelint preview: stagelint is not attached to this buffer", vim.log.levels.ERROR)
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local uri = vim.uri_from_bufnr(bufnr)
  requester(client)("textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
    local chosen
    for _, lens in ipairs((not err and lenses) or {}) do
      if lens.command and lens.command.command == "stagelint.previewPrompt" and lens.range.start.line <= line then
        if chosen == nil or lens.range.start.line > chosen.range.start.line then
          chosen = lens
        end
      end
    end
    if chosen == nil then
      vim.g.stagelint_preview = "error: no phase with a prompt at or above the cursor"
      vim.notify("stagelint preview: no phase with a prompt at or above the cursor", vim.log.levels.WARN)
      return
    end
    local params = { command = chosen.command.command, arguments = chosen.command.arguments }
    requester(client)("workspace/executeCommand", params, function(run_err, result)
      if run_err then
        vim.g.stagelint_preview = "error: " .. (run_err.message or tostring(run_err))
        vim.notify("stagelint preview: " .. (run_err.message or tostring(run_err)), vim.log.levels.ERROR)
        return
      end
      vim.g.stagelint_preview = result.document or ""
      if result.document then
        vim.cmd("split " .. vim.fn.fnameescape(result.document))
        vim.bo.readonly = true
        vim.bo.autoread = true
        watch_preview(result.document)
      end
    end)
  end, bufnr)
end

function M.setup(opts)
  opts = opts or {}
  opts_open_report = opts.open_report
  vim.api.nvim_create_user_command("StagelintDryRun", function()
    M.dry_run(0)
  end, { desc = "stagelint: dry-run this stage, state machine or workflow against one of its cassettes" })
  vim.api.nvim_create_user_command("StagelintPreview", function()
    M.preview(0)
  end, { desc = "stagelint: preview the prompt of the Last Light phase under the cursor" })
  M.detect_filetypes()
  local cmd = opts.cmd or { "stagelint", "lsp" }
  if vim.lsp.config and vim.lsp.enable then
    -- Neovim 0.11+.
    vim.lsp.config("stagelint", {
      cmd = cmd,
      filetypes = M.filetypes,
      -- Not calling on_dir leaves the buffer alone (a Cargo.toml, say).
      root_dir = function(bufnr, on_dir)
        if wanted(bufnr) then
          on_dir(root_dir(bufnr))
        end
      end,
    })
    vim.lsp.enable("stagelint")
    return
  end
  local clients = {}
  vim.api.nvim_create_autocmd("FileType", {
    pattern = M.filetypes,
    callback = function(args)
      if not wanted(args.buf) then
        return
      end
      local root = root_dir(args.buf)
      if vim.lsp.start then
        -- Neovim 0.8–0.10: vim.lsp.start reuses a client with the same name and root.
        vim.lsp.start({ name = "stagelint", cmd = cmd, root_dir = root }, { bufnr = args.buf })
        return
      end
      -- Neovim 0.7: one client per root, attached by hand.
      if not clients[root] then
        clients[root] = vim.lsp.start_client({ name = "stagelint", cmd = cmd, root_dir = root })
      end
      vim.lsp.buf_attach_client(args.buf, clients[root])
    end,
  })
end

-- Filetypes for the files stagelint reads that Neovim would not recognise on its own or would
-- give another type: cassettes and state machines are YAML or JSON, stagelint.toml is TOML,
-- and a markdown stage definition, prompt or SKILL.md stays markdown (b:stagelint_file marks the
-- definition files for statuslines and mappings).
function M.detect_filetypes()
  local patterns = {
    ["*.cassette.yaml"] = "yaml",
    ["*.cassette.yml"] = "yaml",
    ["*.cassette.json"] = "json",
    ["sm.yaml"] = "yaml",
    ["sm.yml"] = "yaml",
    ["sm.json"] = "json",
    ["steps_registry.json"] = "json",
    ["stagelint.toml"] = "toml",
    [".stagelint.toml"] = "toml",
  }
  for pattern, filetype in pairs(patterns) do
    vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
      pattern = pattern,
      callback = function(args)
        vim.bo[args.buf].filetype = filetype
        vim.b[args.buf].stagelint_file = true
      end,
    })
  end
  -- A markdown file whose frontmatter declares a completionTool is a stage definition.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    pattern = { "*.md", "*.markdown" },
    callback = function(args)
      local head = vim.api.nvim_buf_get_lines(args.buf, 0, 40, false)
      if head[1] == "---" then
        for _, line in ipairs(head) do
          if line:match("^completionTool:") then
            vim.b[args.buf].stagelint_file = true
            vim.b[args.buf].stagelint_kind = "stage"
            break
          end
        end
      end
    end,
  })
end
return M
