// FreeDict's dictd files (data/freedict.hpp): a hand-written dictionary, plain and gzip-compressed,
// read entry by entry; every malformed index line refused naming the file and line; absent files are
// a missing data set; and Debian's dict-freedict-eng-spa where it is installed (the tests' command
// installs it): its 5,907 headwords.
#include "scratch_dir.hpp"

#include <tpudsl/data/freedict.hpp>

#include <catch2/catch.hpp>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using tpudsl::data::dictionary_entry;
namespace freedict = tpudsl::data::freedict;

namespace {

// dictd's base 64 of v
std::string
b64(std::size_t v)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string s;
    do {
        s.insert(s.begin(), digits[v % 64]);
        v /= 64;
    } while (v > 0);
    return s;
}

// The text of a small dictionary and its index: a database entry, one sense, numbered senses.
struct small_dictionary {
    std::string text, index;
    small_dictionary()
    {
        add("00databaseshort", "00-database-short\n   English-Spanish FreeDict Dictionary\n");
        add("abandon", "abandon /əbændən/\nabandonar\n");
        add("abate", "abate /əbeit/\n1. calmarse, sosegarse\n2. amainar\n");
        add("abc", "ABC /eibiːsiː/\nabecé, alfabeto\n");
    }
    void
    add(const std::string& headword, const std::string& entry)
    {
        index += headword + "\t" + b64(text.size()) + "\t" + b64(entry.size()) + "\n";
        text += entry;
    }
};

void
write(const std::string& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary) << bytes;
}

void
write_gzip(const std::string& path, const std::string& bytes)
{
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
    REQUIRE(gzclose(f) == Z_OK);
}

} // namespace

TEST_CASE("FreeDict: entries, their headwords and every sense's translations, plain and dictzip", "[data][freedict]")
{
    tpudsl_tests::scratch_dir dir("freedict");
    const small_dictionary d;
    write(dir / "freedict-eng-spa.index", d.index);
    for (const bool compressed : {false, true}) {
        std::filesystem::remove(dir / "freedict-eng-spa.dict");
        std::filesystem::remove(dir / "freedict-eng-spa.dict.dz");
        if (compressed)
            write_gzip(dir / "freedict-eng-spa.dict.dz", d.text);
        else
            write(dir / "freedict-eng-spa.dict", d.text);
        const std::vector<dictionary_entry> e = freedict::load_data("eng-spa", dir.path.string());
        REQUIRE(e.size() == 3);   // the database entry skipped
        CHECK(e[0].headword == "abandon");
        CHECK(e[0].translations == std::vector<std::string>{"abandonar"});
        CHECK(e[1].headword == "abate");
        CHECK(e[1].translations == std::vector<std::string>{"calmarse", "sosegarse", "amainar"});
        CHECK(e[2].headword == "ABC");   // the entry's spelling, not the index's folded one
        CHECK(e[2].translations == std::vector<std::string>{"abecé", "alfabeto"});
    }
}

TEST_CASE("FreeDict: a malformed index or text is refused, naming the file, the line and what was expected",
          "[data][freedict]")
{
    tpudsl_tests::scratch_dir dir("freedict_bad");
    const small_dictionary d;
    write(dir / "freedict-eng-spa.dict", d.text);
    auto refused = [&](const std::string& index, const std::string& expected) {
        write(dir / "freedict-eng-spa.index", index);
        INFO(index);
        CHECK_THROWS_WITH(freedict::load_data("eng-spa", dir.path.string()), Catch::Contains(expected));
    };
    refused("abandon\tA\n", "freedict-eng-spa.index', line 1: expected 'headword<TAB>offset<TAB>length'");
    refused("abandon\tA\tB\tC\n", "line 1: expected 'headword<TAB>offset<TAB>length'");
    refused(d.index + "abet\tA$\tB\n", "line 5: expected the offset in dictd's base 64 (A-Z a-z 0-9 + /), found 'A$'");
    refused("abet\tA\t\n", "line 1: expected the length in dictd's base 64 (1 to 10 digits), found ''");
    refused("abet\tA\tBBBBBBBBBBB\n", "expected the length in dictd's base 64 (1 to 10 digits)");
    refused("abet\t" + b64(d.text.size()) + "\tB\n", "entry 'abet' spans bytes " + std::to_string(d.text.size()) +
                                                          " to " + std::to_string(d.text.size() + 1) + ", past the end");
    refused("abet\tA\tA\n", "line 1: entry 'abet' has no headword line and translation");
    refused("abet\tA\tR\n", "line 1: entry 'abet' has no headword line and translation");   // "00-database-shor"

    SECTION("a truncated dictzip file")
    {
        write(dir / "freedict-eng-spa.index", d.index);
        std::filesystem::remove(dir / "freedict-eng-spa.dict");
        write_gzip(dir / "whole.gz", d.text);
        std::ifstream in(dir / "whole.gz", std::ios::binary);
        const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        write(dir / "freedict-eng-spa.dict.dz", gz.substr(0, gz.size() - 6));
        CHECK_THROWS_WITH(freedict::load_data("eng-spa", dir.path.string()), Catch::Contains("freedict-eng-spa.dict.dz"));
    }
}

TEST_CASE("FreeDict: absent files are a missing data set that says how to get them", "[data][freedict]")
{
    tpudsl_tests::scratch_dir dir("freedict_none");
    CHECK_THROWS_AS(freedict::load_data("eng-spa", dir.path.string()), tpudsl::data::missing_data_set);
    CHECK_THROWS_WITH(freedict::load_data("eng-spa", dir.path.string()),
                      Catch::Contains("apt-get install dict-freedict-eng-spa"));
}

TEST_CASE("FreeDict: Debian's English-Spanish dictionary, where installed", "[data][freedict]")
{
    const std::string dir = freedict::default_directory();
    if (!std::filesystem::exists(std::filesystem::path(dir) / "freedict-eng-spa.index")) {
        WARN("dict-freedict-eng-spa is not installed in " << dir << ": skipped");
        return;
    }
    const std::vector<dictionary_entry> e = freedict::load_data("eng-spa");
    CHECK(e.size() == 5907);   // "Size: 5907 headwords", its 00-database-info says
    bool abandon = false;
    for (const dictionary_entry& x : e) {
        CHECK(!x.headword.empty());
        CHECK(!x.translations.empty());
        if (x.headword == "abandon")
            abandon = x.translations.front() == "abandonar";
    }
    CHECK(abandon);
}
