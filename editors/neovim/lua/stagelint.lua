-- stagelint for Neovim: `require("stagelint").setup()` starts `stagelint lsp` for stage
-- definitions, state machines, climpt agents and workflows.
-- Neovim 0.11+ uses vim.lsp.config/vim.lsp.enable; older versions (0.7+) start the client
-- from a FileType autocommand, one client per project root.
local M = {}
local opts_open_report = true

-- `toml` is there for stagelint.toml alone: other TOML buffers do not start or attach the server.
M.filetypes = { "markdown", "yaml", "json", "toml" }
M.root_markers = { "stagelint.toml", ".stagelint.toml", ".git" }

local function is_config(bufnr)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
  return name == "stagelint.toml" or name == ".stagelint.toml"
end

-- Whether the server should see this buffer: any of its filetypes, but of TOML files only ours.
local function wanted(bufnr)
  return vim.bo[bufnr].filetype ~= "toml" or is_config(bufnr)
end

local function root_dir(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  for _, marker in ipairs(M.root_markers) do
    local found = vim.fn.findfile(marker, dir .. ";")
    if found == "" then
      found = vim.fn.finddir(marker, dir .. ";")
    end
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h"):gsub("/%.git$", "")
    end
  end
  return dir
end

-- Runs the dry-run code lens command for the current buffer (a stage or sm.yaml): the summary
-- goes to vim.notify and g:stagelint_dry_run, and the report opens in a split.
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

function M.dry_run(bufnr)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local client = stagelint_client(bufnr)
  if not client then
    vim.g.stagelint_dry_run = "error: stagelint is not attached to this buffer"
    vim.notify("stagelint dry-run: " .. vim.g.stagelint_dry_run, vim.log.levels.ERROR)
    return
  end
  local params = { command = "stagelint.dryRun", arguments = { vim.uri_from_bufnr(bufnr) } }
  local request = client.request
  if vim.fn.has("nvim-0.11") == 1 then
    -- 0.11 deprecates the dot form.
    request = function(...)
      return client:request(...)
    end
  end
  request("workspace/executeCommand", params, function(err, result)
    if err then
      vim.g.stagelint_dry_run = "error: " .. (err.message or tostring(err))
      vim.notify("stagelint dry-run: " .. vim.g.stagelint_dry_run, vim.log.levels.ERROR)
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

function M.setup(opts)
  opts = opts or {}
  opts_open_report = opts.open_report
  vim.api.nvim_create_user_command("StagelintDryRun", function()
    M.dry_run(0)
  end, { desc = "stagelint: dry-run this stage or state machine against its cassette" })
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
