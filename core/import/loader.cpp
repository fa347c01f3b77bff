// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/loader.h"

#include "import/archivefinder.h"
#include "import/otf2importer.h"

namespace exposure {

std::shared_ptr<Trace> loadTrace(const std::string& path, const LoadOptions& options)
{
    const auto archives = findArchives(path);
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    Otf2Importer importer(*trace, options);
    for (const auto& a : archives) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        importer.readDefinitions(a);
    }
    importer.readEvents();
    importer.finish();
    return trace;
}

} // namespace exposure
