-- stagelint for Neovim: `require("stagelint").setup()` starts `stagelint lsp` for stage
-- definitions, state machines, climpt agents and workflows.
-- Neovim 0.11+ uses vim.lsp.config/vim.lsp.enable; older versions (0.7+) start the client
-- from a FileType autocommand, one client per project root.
local M = {}

M.filetypes = { "markdown", "yaml", "json" }
M.root_markers = { "stagelint.toml", ".stagelint.toml", ".git" }

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

function M.setup(opts)
  opts = opts or {}
  local cmd = opts.cmd or { "stagelint", "lsp" }
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config("stagelint", { cmd = cmd, filetypes = M.filetypes, root_markers = M.root_markers })
    vim.lsp.enable("stagelint")
    return
  end
  local clients = {}
  vim.api.nvim_create_autocmd("FileType", {
    pattern = M.filetypes,
    callback = function(args)
      local root = root_dir(args.buf)
      if not clients[root] then
        clients[root] = vim.lsp.start_client({ name = "stagelint", cmd = cmd, root_dir = root })
      end
      vim.lsp.buf_attach_client(args.buf, clients[root])
    end,
  })
end

return M
