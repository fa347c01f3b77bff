// SPDX-License-Identifier: GPL-3.0-or-later
// Replays files through a fuzz target's LLVMFuzzerTestOneInput when the build does not use libFuzzer (g++, the CI
// build): `fuzz_x FILE|DIR...` runs every file given or found (recursively) once. It keeps the targets compiling
// and their seed corpora passing in every build; a finding aborts (non-zero exit), like under libFuzzer.
// `--expect FILE` also compares what became of each input (exposureFuzzOutcome: "ranks=N kernels=K", "rejected")
// with the lines "TARGET/SEED OUTCOME" of FILE whose key is the input's folder and name ("otf2/small"); a seed with
// an expected result that differs is a failure.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) const char* exposureFuzzOutcome();

namespace {

// "otf2/small ranks=1" lines; '#' starts a comment.
std::map<std::string, std::string> readExpected(const std::string& path)
{
    std::map<std::string, std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        const auto space = line.find(' ');
        if (space != std::string::npos)
            out[line.substr(0, space)] = line.substr(space + 1);
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    std::map<std::string, std::string> expected;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--expect" && i + 1 < argc) {
            expected = readExpected(argv[++i]);
            if (expected.empty()) {
                std::fprintf(stderr, "%s: no expected results read\n", argv[i]);
                return 2;
            }
            continue;
        }
        const fs::path p = argv[i];
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file())
                    files.push_back(e.path());
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            std::fprintf(stderr, "%s: no such file or folder\n", argv[i]);
            return 2;
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s FILE|DIR... (no input files found)\n", argv[0]);
        return 2;
    }
    int checked = 0;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay %s (%zu bytes)\n", f.string().c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        const std::string key = f.parent_path().filename().string() + "/" + f.filename().string();
        const auto want = expected.find(key);
        if (want == expected.end())
            continue;
        const std::string got = exposureFuzzOutcome ? exposureFuzzOutcome() : "(target reports no outcome)";
        if (got != want->second) {
            std::fprintf(stderr, "%s: expected %s, got %s\n", key.c_str(), want->second.c_str(), got.c_str());
            return 1;
        }
        std::fprintf(stderr, "  %s as expected\n", got.c_str());
        ++checked;
    }
    std::printf("%zu inputs replayed without a finding, %d with their expected result\n", files.size(), checked);
    return 0;
}
