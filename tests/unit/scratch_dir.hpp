// A directory of the test's own under the system's temporary directory, removed when it goes out of
// scope (named by the test and the process, so parallel test programs never share one).
#ifndef TPUDSL_TESTS_UNIT_SCRATCH_DIR_HPP
#define TPUDSL_TESTS_UNIT_SCRATCH_DIR_HPP

#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace tpudsl_tests {

struct scratch_dir {
    std::filesystem::path path;
    explicit scratch_dir(const std::string& name)
        : path(std::filesystem::temp_directory_path() / ("tpudsl_" + name + "_" + std::to_string(::getpid())))
    {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    ~scratch_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
};

} // namespace tpudsl_tests

#endif
