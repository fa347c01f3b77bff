// SPDX-License-Identifier: GPL-3.0-or-later
#include "nodelay.h"

#include <cstdlib>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace exposure::mpi {

int setNoDelayOnTcpSockets()
{
    DIR* dir = opendir("/proc/self/fd");
    if (!dir)
        return 0;
    int changed = 0;
    const int own = dirfd(dir);
    while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == own)
            continue;
        int type = 0;
        socklen_t len = sizeof type;
        if (getsockopt(int(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
            continue;
        sockaddr_storage addr {};
        socklen_t addrLen = sizeof addr;
        if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&addr), &addrLen) != 0
            || (addr.ss_family != AF_INET && addr.ss_family != AF_INET6))
            continue;
        const int one = 1;
        if (setsockopt(int(fd), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0)
            ++changed;
    }
    closedir(dir);
    return changed;
}

} // namespace exposure::mpi
