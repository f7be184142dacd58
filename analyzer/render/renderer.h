// Renderers print findings; each output format lives in its own file under render/.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "findings/finding.h"

namespace devlint {

enum class OutputFormat { Full, Concise };

std::optional<OutputFormat> parse_output_format(const std::string &name);

struct RenderOptions {
  bool color = false;
  bool unsafe_fixes = false; // whether unsafe fixes count as available
};

void render_full(std::ostream &out, const std::vector<Finding> &findings,
                 const RenderOptions &options);
void render_concise(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options);
// The closing summary of the text formats ("Found 3 errors.").
void render_summary(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options);

void render(OutputFormat format, std::ostream &out, const std::vector<Finding> &findings,
            const RenderOptions &options);

// Shared by renderers: whether the finding's fix would be applied by --fix.
bool fix_available(const Finding &f, const RenderOptions &options);

} // namespace devlint
