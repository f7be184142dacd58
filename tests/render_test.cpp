// Golden tests for the machine-readable output formats, on a hand-made finding so that changes
// in the analysis do not move them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "render/render_support.h"
#include "render/renderer.h"
#include "rules/rule.h"
#include "test_support.h"

namespace devlint {
namespace {

class RenderTest : public ::testing::Test {
protected:
  void SetUp() override {
    file = testing::source("x = 1\n"
                           "out = torch.cat((a, b), dim=0)  # é!\n",
                           "pkg/modeling_x.py");
    Finding f;
    f.code = "DL001";
    f.rule_name = "cross-device-concat";
    f.message = "`torch.cat` combines `b`, with `a`: 50% on\nanother device";
    f.file = file.get();
    f.range = {12, 36, 2, 7, 2, 31};
    f.origins.push_back({"pkg/modeling_x.py", {0, 1, 1, 1, 1, 2}, "`a`: an input"});
    f.why = "X is split";
    f.fix = Fix{Applicability::Safe, "Move `b` to `a.device`", {{32, 33, "b.to(a.device)"}}};
    findings.push_back(std::move(f));
  }
  std::string rendered(OutputFormat format, const std::string &docs_url = "") {
    std::ostringstream out;
    RenderOptions options;
    options.tool_version = "9.9.9";
    options.source_root = "/src";
    options.docs_url = docs_url;
    render(format, out, findings, options);
    return out.str();
  }
  std::unique_ptr<SourceFile> file;
  std::vector<Finding> findings;
};

TEST_F(RenderTest, FormatNamesParse) {
  for (const char *name :
       {"full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"})
    EXPECT_TRUE(parse_output_format(name)) << name;
  EXPECT_FALSE(parse_output_format("xml"));
}

TEST_F(RenderTest, GithubEscapesDataAndProperties) {
  EXPECT_EQ(rendered(OutputFormat::Github),
            "::error file=pkg/modeling_x.py,line=2,col=7,endLine=2,endColumn=31,"
            "title=DL001 (cross-device-concat)::pkg/modeling_x.py:2:7: DL001 `torch.cat` "
            "combines `b`, with `a`: 50%25 on%0Aanother device\n");
  file->display_path = "a,b:c.py";
  EXPECT_NE(rendered(OutputFormat::Github).find("file=a%2Cb%3Ac.py,"), std::string::npos);
}

TEST_F(RenderTest, JsonHasLocationsOriginsAndFix) {
  nlohmann::json all = nlohmann::json::parse(rendered(OutputFormat::Json));
  ASSERT_EQ(all.size(), 1u);
  const auto &f = all[0];
  EXPECT_EQ(f["code"], "DL001");
  EXPECT_EQ(f["rule"], "cross-device-concat");
  EXPECT_EQ(f["filename"], "pkg/modeling_x.py");
  EXPECT_EQ(f["location"], (nlohmann::json{{"row", 2}, {"column", 7}}));
  EXPECT_EQ(f["end_location"], (nlohmann::json{{"row", 2}, {"column", 31}}));
  EXPECT_EQ(f["origins"][0]["message"], "`a`: an input");
  EXPECT_EQ(f["fix"]["applicability"], "safe");
  EXPECT_EQ(f["fix"]["edits"][0]["content"], "b.to(a.device)");
  EXPECT_EQ(f["fix"]["edits"][0]["location"], (nlohmann::json{{"row", 2}, {"column", 27}}));
  EXPECT_EQ(f["fingerprint"].get<std::string>().size(), 16u);
}

TEST_F(RenderTest, JsonLinesIsOneObjectPerLine) {
  findings.push_back(findings[0]);
  std::istringstream lines(rendered(OutputFormat::JsonLines));
  std::string line;
  std::vector<std::string> prints;
  while (std::getline(lines, line))
    prints.push_back(nlohmann::json::parse(line)["fingerprint"]);
  ASSERT_EQ(prints.size(), 2u);
  EXPECT_NE(prints[0], prints[1]); // identical sites get distinct fingerprints (occurrence index)
}

TEST_F(RenderTest, FingerprintIgnoresLineShiftsButNotTheSite) {
  std::string before = fingerprints(findings)[0];
  auto shifted =
      testing::source("\n\n\nx = 1\nout = torch.cat((a,  b), dim=0)\n", "pkg/modeling_x.py");
  findings[0].file = shifted.get();
  findings[0].range = {15, 40, 5, 7, 5, 32};
  EXPECT_EQ(fingerprints(findings)[0], before);
  findings[0].code = "DL002";
  EXPECT_NE(fingerprints(findings)[0], before);
}

TEST_F(RenderTest, SarifCarriesRulesRelatedLocationsFixesAndFingerprints) {
  nlohmann::json log = nlohmann::json::parse(rendered(OutputFormat::Sarif));
  EXPECT_EQ(log["version"], "2.1.0");
  const auto &run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["version"], "9.9.9");
  EXPECT_EQ(run["originalUriBaseIds"]["SRCROOT"]["uri"], "file:///src/");
  const auto &rules = run["tool"]["driver"]["rules"];
  ASSERT_FALSE(rules.empty());
  for (const auto &rule : rules) {
    EXPECT_FALSE(rule["help"]["text"].get<std::string>().empty());
    EXPECT_FALSE(rule.contains("helpUri")) << "no placeholder links without docs-url";
  }
  EXPECT_FALSE(run["tool"]["driver"].contains("informationUri"));
  const auto &result = run["results"][0];
  EXPECT_EQ(rules[result["ruleIndex"].get<size_t>()]["id"], "DL001");
  const auto &location = result["locations"][0]["physicalLocation"];
  EXPECT_EQ(location["artifactLocation"]["uri"], "pkg/modeling_x.py");
  EXPECT_EQ(location["artifactLocation"]["uriBaseId"], "SRCROOT");
  EXPECT_EQ(location["region"]["startLine"], 2);
  EXPECT_EQ(location["region"]["snippet"]["text"], "torch.cat((a, b), dim=0)");
  EXPECT_EQ(result["relatedLocations"][0]["message"]["text"], "`a`: an input.");
  const auto &change = result["fixes"][0]["artifactChanges"][0];
  EXPECT_EQ(change["replacements"][0]["insertedContent"]["text"], "b.to(a.device)");
  EXPECT_EQ(change["replacements"][0]["deletedRegion"]["startColumn"], 27);
  EXPECT_EQ(result["partialFingerprints"]["devlintSite/v1"], fingerprints(findings)[0]);
}

TEST_F(RenderTest, SarifHelpMarkdownIsTheWholeRuleDoc) {
  nlohmann::json log = nlohmann::json::parse(rendered(OutputFormat::Sarif));
  for (const auto &rule : log["runs"][0]["tool"]["driver"]["rules"]) {
    const Rule *known = find_rule(rule["id"].get<std::string>());
    ASSERT_NE(known, nullptr);
    std::string markdown = rule["help"]["markdown"];
    EXPECT_EQ(markdown, rule_markdown(known->info()));
    EXPECT_NE(markdown.find(std::string(known->info().doc)), std::string::npos);
    EXPECT_EQ(markdown.rfind("# " + std::string(known->info().name), 0), 0u);
  }
}

TEST_F(RenderTest, SarifMessageLinksItsRelatedLocations) {
  findings[0].message = "`x[0]` meets `a`";
  findings[0].origins.push_back({"pkg/modeling_x.py", {0, 1, 1, 1, 1, 2}, "`b`: a parameter"});
  nlohmann::json log = nlohmann::json::parse(rendered(OutputFormat::Sarif));
  const auto &result = log["runs"][0]["results"][0];
  // Literal brackets are escaped so that only the links are links.
  // The placement fact (`why`) follows, kept out of the short first line.
  EXPECT_EQ(result["message"]["text"],
            "`x\\[0\\]` meets `a`. Origins: [`a`](1), [`b`](2). X is split.");
  EXPECT_EQ(result["relatedLocations"][0]["id"], 1);
  EXPECT_EQ(result["relatedLocations"][1]["id"], 2);
}

TEST_F(RenderTest, DocsUrlSettingLinksRules) {
  nlohmann::json json = nlohmann::json::parse(rendered(OutputFormat::Json));
  EXPECT_TRUE(json[0]["url"].is_null());
  json = nlohmann::json::parse(rendered(OutputFormat::Json, "https://docs.example/devlint/"));
  EXPECT_EQ(json[0]["url"], "https://docs.example/devlint/DL001.md");
  nlohmann::json log =
      nlohmann::json::parse(rendered(OutputFormat::Sarif, "https://docs.example/r/{name}.html"));
  const auto &driver = log["runs"][0]["tool"]["driver"];
  EXPECT_EQ(driver["rules"][driver["rules"].size() - 1]["helpUri"],
            "https://docs.example/r/unused-suppression.html");
  EXPECT_EQ(driver["informationUri"], "https://docs.example/r/");
  log = nlohmann::json::parse(rendered(OutputFormat::Sarif, "https://docs.example/devlint"));
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["informationUri"], "https://docs.example/devlint");
}

TEST_F(RenderTest, SarifColumnsCountCodePoints) {
  // `é` is two bytes: what follows it starts one code point earlier than its byte column.
  findings[0].range = {42, 43, 2, 37, 2, 38}; // the `!` after `é`
  nlohmann::json log = nlohmann::json::parse(rendered(OutputFormat::Sarif));
  EXPECT_EQ(
      log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"],
      36);
}

TEST_F(RenderTest, GitlabCodeQuality) {
  nlohmann::json issues = nlohmann::json::parse(rendered(OutputFormat::Gitlab));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0]["check_name"], "DL001 (cross-device-concat)");
  EXPECT_EQ(issues[0]["severity"], "major");
  EXPECT_EQ(issues[0]["location"]["path"], "pkg/modeling_x.py");
  EXPECT_EQ(issues[0]["location"]["positions"]["begin"]["line"], 2);
  EXPECT_EQ(issues[0]["location"]["lines"]["begin"], 2);
  EXPECT_EQ(issues[0]["fingerprint"], fingerprints(findings)[0]);
}

TEST_F(RenderTest, JunitGolden) {
  findings[0].message = "a <b> & \"c\"";
  EXPECT_EQ(rendered(OutputFormat::Junit),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"devlint\" tests=\"1\" failures=\"1\" errors=\"0\">\n"
            "  <testsuite name=\"pkg/modeling_x.py\" tests=\"1\" failures=\"1\" errors=\"0\">\n"
            "    <testcase name=\"DL001 (cross-device-concat) at 2:7\" "
            "classname=\"pkg/modeling_x.py\" file=\"pkg/modeling_x.py\" line=\"2\">\n"
            "      <failure message=\"a &lt;b&gt; &amp; &quot;c&quot;\" type=\"DL001\">"
            "pkg/modeling_x.py:2:7: DL001 a &lt;b&gt; &amp; &quot;c&quot;</failure>\n"
            "    </testcase>\n"
            "  </testsuite>\n"
            "</testsuites>\n");
  findings.clear();
  EXPECT_NE(rendered(OutputFormat::Junit).find("tests=\"1\" failures=\"0\""), std::string::npos);
}

// The placement's rank (issue 12) in every format: a warning stays a finding everywhere (JUnit
// counts it as a failure) but says it is one.
TEST_F(RenderTest, WarningRankInEveryFormat) {
  findings[0].level = FindingLevel::Warning;
  findings[0].placement = "no device_map=\"auto\" placement on 2 to 8 GPUs separates these";
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Json))[0]["level"], "warning");
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Json))[0]["placement"],
            findings[0].placement);
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::JsonLines))["level"], "warning");
  nlohmann::json sarif = nlohmann::json::parse(rendered(OutputFormat::Sarif));
  EXPECT_EQ(sarif["runs"][0]["results"][0]["level"], "warning");
  EXPECT_EQ(rendered(OutputFormat::Github).rfind("::warning file=pkg/modeling_x.py,", 0), 0u);
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Gitlab))[0]["severity"], "minor");
  std::string junit = rendered(OutputFormat::Junit);
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("DL001 (warning) "), std::string::npos);
  EXPECT_NE(junit.find("placement: no device_map"), std::string::npos);
  EXPECT_NE(rendered(OutputFormat::Concise).find("DL001 (warning) [*] "), std::string::npos);
  std::string full = rendered(OutputFormat::Full);
  EXPECT_NE(full.find("DL001 (warning) [*] "), std::string::npos);
  EXPECT_NE(full.find("= placement: no device_map"), std::string::npos);
  // An error says nothing of its rank in the text formats, as before ranks existed.
  findings[0].level = FindingLevel::Error;
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Json))[0]["level"], "error");
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Sarif))["runs"][0]["results"][0]["level"],
            "error");
  EXPECT_EQ(rendered(OutputFormat::Github).rfind("::error ", 0), 0u);
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Gitlab))[0]["severity"], "major");
  EXPECT_EQ(rendered(OutputFormat::Concise).find("(warning)"), std::string::npos);
}

TEST_F(RenderTest, EmptyRunsAreValidDocuments) {
  findings.clear();
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Json)), nlohmann::json::array());
  EXPECT_EQ(nlohmann::json::parse(rendered(OutputFormat::Gitlab)), nlohmann::json::array());
  EXPECT_TRUE(nlohmann::json::parse(rendered(OutputFormat::Sarif))["runs"][0]["results"].empty());
  EXPECT_EQ(rendered(OutputFormat::Github), "");
  EXPECT_EQ(rendered(OutputFormat::JsonLines), "");
}

} // namespace
} // namespace devlint
