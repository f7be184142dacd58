// `devlint server`: a Language Server Protocol server over stdio, for editors. It pushes
// diagnostics when a Python document is opened, changed or saved (each origin as related
// information), and offers code actions: a finding's fix, and a `# noqa: CODE` quick fix.
// Settings come from the configuration files found from each document's directory, as on the
// command line, with `initializationOptions` (or workspace/didChangeConfiguration's `devlint`
// section) on top: {"select": [...], "ignore": [...], "extendSelect": [...],
// "noSplitModules": [...], "skipKeys": [...], "configuration": "path", "isolated": bool,
// "unsafeFixes": bool}.
#pragma once

#include <istream>
#include <ostream>

namespace devlint {

// Serves one client until `exit`; returns the process exit code (0 after `shutdown`, else 1).
int run_language_server(std::istream &in, std::ostream &out);

} // namespace devlint
