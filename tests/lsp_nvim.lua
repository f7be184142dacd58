-- `devlint server` driven by a real LSP client: Neovim's built-in one (0.7 API), headless.
-- tests/lsp_server_e2e.sh sets DEVLINT_BIN, LSP_PROJECT and LSP_RESULT and runs this with
-- `nvim --headless -u NONE -c "luafile tests/lsp_nvim.lua"`.
local devlint = os.getenv("DEVLINT_BIN")
local project = os.getenv("LSP_PROJECT")
local result_file = os.getenv("LSP_RESULT")
local log = {}
local function note(text)
  table.insert(log, text)
end
local function check(condition, what)
  if not condition then
    error("FAIL: " .. what, 2)
  end
  note("ok: " .. what)
end

local published = {} -- uri -> list of pushed diagnostic arrays
local function pushes(uri)
  return published[uri] or {}
end
local function last(uri)
  local all = pushes(uri)
  return all[#all]
end

local function main()
  vim.lsp.set_log_level("debug")
  local client_id = vim.lsp.start_client({
    name = "devlint",
    cmd = { devlint, "server" },
    root_dir = project,
    -- Overrides over the project's configuration files: DL007 off.
    init_options = { ignore = { "DL007" } },
    handlers = {
      ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
        published[result.uri] = published[result.uri] or {}
        table.insert(published[result.uri], result.diagnostics)
        vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
      end,
    },
  })
  check(client_id ~= nil, "the client starts devlint server")

  -- didOpen: the finding is pushed, with both origins as related information.
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/models/modeling_two.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  vim.lsp.buf_attach_client(bufnr, client_id)
  check(vim.wait(30000, function() return #pushes(uri) >= 1 end, 20), "diagnostics pushed on open")
  local diagnostics = last(uri)
  check(#diagnostics == 1, "one diagnostic (DL007 is off by initializationOptions), got " .. #diagnostics)
  local d = diagnostics[1]
  check(d.code == "DL001" and d.source == "devlint", "it is DL001 from devlint")
  check(d.range.start.line == 30 and d.range.start.character == 27, "at line 31, column 28")
  check(d.message:find("torch.cat", 1, true) ~= nil, "with devlint's message")
  check(d.relatedInformation ~= nil and #d.relatedInformation == 2, "two origins as related information")
  check(d.relatedInformation[1].message:find("kv_cache", 1, true) == 1
    or d.relatedInformation[1].message:find("`kv_cache`", 1, true) ~= nil, "the first origin is kv_cache")
  check(d.relatedInformation[1].location.uri == uri and d.relatedInformation[1].location.range.start.line == 26,
    "the origin points at line 27 of the same file")
  check(#vim.diagnostic.get(bufnr) == 1, "Neovim shows the diagnostic")

  -- Code actions at the finding: the fix and a noqa quick fix.
  local client = vim.lsp.get_client_by_id(client_id)
  local function actions()
    local params = {
      textDocument = { uri = uri },
      range = { start = { line = 30, character = 0 }, ["end"] = { line = 30, character = 0 } },
      context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, 30) },
    }
    local response = client.request_sync("textDocument/codeAction", params, 10000, bufnr)
    check(response ~= nil and response.err == nil, "codeAction answers")
    local fix, noqa
    for _, action in ipairs(response.result) do
      if action.title:find("Move `kv_cache` to `presents.device`", 1, true) then fix = action end
      if action.title:find("noqa", 1, true) then noqa = action end
    end
    return fix, noqa
  end
  local fix, noqa = actions()
  check(fix ~= nil and fix.kind == "quickfix" and fix.isPreferred, "the fix is a preferred quick fix")
  check(noqa ~= nil, "a noqa quick fix is offered")
  check(noqa.edit.changes[uri][1].newText == "  # noqa: DL001", "the noqa edit appends # noqa: DL001")

  -- Applying the fix edits the buffer; didChange re-analyzes and clears the diagnostic.
  local before = #pushes(uri)
  vim.lsp.util.apply_workspace_edit(fix.edit, "utf-16")
  local line = vim.api.nvim_buf_get_lines(bufnr, 30, 31, false)[1]
  check(line:find("torch.cat((presents, kv_cache.to(presents.device)), dim=0)", 1, true) ~= nil,
    "the fix rewrote line 31")
  check(vim.wait(30000, function() return #pushes(uri) > before and #last(uri) == 0 end, 20),
    "after the change the diagnostic is gone")

  -- Back to the buggy text, then the noqa quick fix.
  before = #pushes(uri)
  vim.cmd("silent undo")
  check(vim.wait(30000, function() return #pushes(uri) > before and #last(uri) == 1 end, 20),
    "undo brings the diagnostic back")
  fix, noqa = actions()
  before = #pushes(uri)
  vim.lsp.util.apply_workspace_edit(noqa.edit, "utf-16")
  line = vim.api.nvim_buf_get_lines(bufnr, 30, 31, false)[1]
  check(line:find("dim=0)  # noqa: DL001", 1, true) ~= nil, "noqa appended to line 31")
  check(vim.wait(30000, function() return #pushes(uri) > before and #last(uri) == 0 end, 20),
    "the noqa comment silences it")

  -- didSave re-analyzes too.
  before = #pushes(uri)
  vim.cmd("silent write")
  check(vim.wait(30000, function() return #pushes(uri) > before end, 20), "diagnostics pushed on save")

  -- A file under a project configuration that ignores DL001: the workspace's settings apply.
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/configured/modeling_two.py"))
  local other = vim.api.nvim_get_current_buf()
  local other_uri = vim.uri_from_bufnr(other)
  vim.lsp.buf_attach_client(other, client_id)
  check(vim.wait(30000, function() return #pushes(other_uri) >= 1 end, 20), "diagnostics pushed for the second file")
  check(#last(other_uri) == 0, "its pyproject.toml ignores DL001")

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function() return vim.lsp.client_is_stopped(client_id) end, 20)
end

local ok, err = pcall(main)
if not ok then
  note(tostring(err))
end
local f = io.open(result_file, "w")
f:write(table.concat(log, "\n") .. "\n" .. (ok and "PASS" or "FAILED") .. "\n")
f:close()
vim.cmd(ok and "qall!" or "cquit! 1")
