// docs.snippets: every ```cpp or ```cmake block in docs/ must be preceded by a marker
//   <!-- snippet: path/from/repo/root#name -->
// and equal, line for line, the lines between the two `[name]` marker lines of that file (a file
// the build compiles), so that the documentation cannot drift from code that compiles.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<std::string>
read_lines(const fs::path& p)
{
    std::ifstream in(p);
    if (!in)
        throw std::runtime_error("cannot open " + p.string());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// The lines strictly between the first two lines that end with "[name]" in a comment; the common
// leading indentation of the region is removed.
std::vector<std::string>
region(const fs::path& file, const std::string& name, std::string& error)
{
    const auto lines = read_lines(file);
    const std::regex marker("^\\s*(//|#)\\s*\\[" + name + "\\]\\s*$");
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (std::regex_match(lines[i], marker))
            at.push_back(i);
    if (at.size() != 2) {
        error = file.string() + ": expected two [" + name + "] markers, found " + std::to_string(at.size());
        return {};
    }
    std::vector<std::string> out(lines.begin() + static_cast<std::ptrdiff_t>(at[0]) + 1,
                                 lines.begin() + static_cast<std::ptrdiff_t>(at[1]));
    std::size_t indent = std::string::npos;
    for (const auto& l : out)
        if (l.find_first_not_of(' ') != std::string::npos)
            indent = std::min(indent, l.find_first_not_of(' '));
    if (indent != std::string::npos)
        for (auto& l : out)
            l = l.size() >= indent ? l.substr(indent) : std::string{};
    return out;
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: check_doc_snippets <repository root>\n";
        return 2;
    }
    const fs::path root = argv[1];
    const std::regex snippet("^<!-- snippet: ([^#]+)#([A-Za-z0-9_]+) -->$");
    int failures = 0, checked = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root / "docs")) {
        if (entry.path().extension() != ".md")
            continue;
        const auto lines = read_lines(entry.path());
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (lines[i] != "```cpp" && lines[i] != "```cmake")
                continue;
            const std::string where = entry.path().filename().string() + ":" + std::to_string(i + 1);
            std::smatch m;
            if (i == 0 || !std::regex_match(lines[i - 1], m, snippet)) {
                std::cerr << where << ": code block without a <!-- snippet: file#name --> marker\n";
                ++failures;
                continue;
            }
            std::vector<std::string> block;
            std::size_t j = i + 1;
            for (; j < lines.size() && lines[j] != "```"; ++j)
                block.push_back(lines[j]);
            std::string error;
            const auto expected = region(root / m[1].str(), m[2].str(), error);
            if (!error.empty()) {
                std::cerr << where << ": " << error << '\n';
                ++failures;
            } else if (block != expected) {
                std::cerr << where << ": block differs from " << m[1] << "#" << m[2] << "; it should read:\n";
                for (const auto& l : expected)
                    std::cerr << "  | " << l << '\n';
                ++failures;
            }
            ++checked;
            i = j;
        }
    }
    std::cout << checked << " snippets checked, " << failures << " failed\n";
    return failures == 0 && checked > 0 ? 0 : 1;
}
