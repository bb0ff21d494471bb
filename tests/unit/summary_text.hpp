/// @file summary_text<Model>(): a model's summary as a string, for the tests that compare summaries.
#ifndef TPUDSL_TESTS_SUMMARY_TEXT_HPP
#define TPUDSL_TESTS_SUMMARY_TEXT_HPP

#include <tpudsl/functional.hpp>
#include <tpudsl/model.hpp>

#include <sstream>
#include <string>

namespace tpudsl_tests {

template <class Model>
std::string
summary_text()
{
    std::ostringstream out;
    tpudsl::summary<Model>(out);
    return out.str();
}

} // namespace tpudsl_tests

#endif // !TPUDSL_TESTS_SUMMARY_TEXT_HPP
