-- Drives `stagelint lsp` from a real Neovim (0.7 or newer): open a broken stage, wait for
-- diagnostics, fix the line through a buffer edit (incremental sync), wait for them to clear.
local bin = os.getenv("STAGELINT_BIN")
local file = os.getenv("STAGE_FILE")
local out = os.getenv("OUT_FILE")
local lines = {}

local function code_of(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
end

vim.cmd("edit " .. file)
local client = vim.lsp.start_client({
  name = "stagelint",
  cmd = { bin, "lsp" },
  root_dir = vim.fn.fnamemodify(file, ":p:h"),
})
vim.lsp.buf_attach_client(0, client)

local found = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
table.insert(lines, "found=" .. tostring(found))
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

vim.fn.writefile(lines, out)
vim.lsp.stop_client(client)
vim.cmd("qa!")
