// SPDX-License-Identifier: GPL-3.0-or-later
// The kinds of input openRun reads, in one table (inputkinds.cpp). A new input kind is one entry there: how it
// recognises a path, how it estimates the memory it needs and how its importer reads it.
#pragma once

#include "import/archivefinder.h"
#include "import/loadoptions.h"
#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace exposure {

struct InputKind;

// What a path holds of one input kind.
struct RunInput
{
    const InputKind* kind = nullptr;
    std::string path; // what the user opened
    std::vector<ArchiveRef> archives; // OTF2: the archives, in rank order
    std::vector<std::string> files; // other kinds: the files to read
};

// The memory a load needs, known before its events are read.
struct MemoryNeed
{
    std::uint64_t bytes = 0;
    std::string what; // for the message: "12.5 M events", "340 MiB of JSON"
};

// One input being read, in the two stages openRun runs apart: the estimate (which may read headers or definitions),
// then the events. read() fills the Trace given to InputKind::open and finalizes it.
class InputReader
{
public:
    virtual ~InputReader() = default;
    virtual MemoryNeed estimate() = 0;
    virtual void read() = 0;
};

struct InputKind
{
    const char* name; // in messages: "OTF2", "torch.profiler"
    // The input `path` holds of this kind; nullopt when it holds none. May throw LoadError saying why the path is
    // not of this kind: when no kind claims a path, the first such error is reported.
    std::optional<RunInput> (*detect)(const std::string& path);
    // Whether LoadOptions::ranks can choose some ranks of the input (RunInput::archives, by rank number).
    bool ranksByFolder;
    std::unique_ptr<InputReader> (*open)(Trace& trace, const RunInput& input, const LoadOptions& options);
};

// Every kind, in the order detection tries them.
const std::vector<InputKind>& inputKinds();

// The kind and files of `path`: the first kind that claims it. Throws LoadError.
RunInput detectInput(const std::string& path);

// The OTF2 kind, for reading given archives (a part of a run).
const InputKind& otf2InputKind();

} // namespace exposure
