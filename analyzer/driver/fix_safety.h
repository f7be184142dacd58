// Fix safety as a property, checked after every fix pass (driver/fix_loop.cpp): a fix may change
// only the bytes it edits, those bytes must lex as the fix meant them to, and the file must parse
// no worse than before. A fix that turns comment text into code still parses, so the parse
// alone is not enough: the token class of every byte is compared too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

// Why applying `edits` (sorted, non-overlapping, offsets into `before`) to `before`, which gave
// `after`, cannot be kept; nullopt when it can. The token checks read Python; for other
// languages (C++: its fixed outputs are compiled in the test suite) only the bytes are checked.
std::optional<std::string> fix_pass_problem(const std::string &before, const std::string &after,
                                            const std::vector<TextEdit> &edits,
                                            bool python_tokens = true);

// Where an offset of the edited text was before the edits; an offset inside an inserted text maps
// to the start of its edit. Used to tell a finding the fixes moved from one they added.
uint32_t offset_before_edits(uint32_t offset_after, const std::vector<TextEdit> &edits);

} // namespace devlint
